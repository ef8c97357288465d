/**
 * How far below a threshold a value may be and still reach it. Rewards and rates are sums and quotients of
 * floating-point numbers: a grader's `0.7 + 0.2 + 0.1` is 0.9999999999999999, and a mean of rewards carries the
 * rounding of each addition. Those errors are about 1e-16 per operation on values near 1, so even a mean over a
 * million rollouts stays far below 1e-9; a reward a grader means to be lower differs by far more (partial credit
 * comes in steps like 0.1 or 0.001). Absolute rather than relative: thresholds and rates are of the order of 1,
 * and a threshold of 0 must not turn into "any value".
 */
export const THRESHOLD_TOLERANCE = 1e-9;

/**
 * Whether `value` reaches `minimum`, up to {@link THRESHOLD_TOLERANCE}: the one comparison every verdict makes
 * (a rollout's reward against its pass threshold, a suite's mean reward, pass@k and row pass rate against its gate,
 * and its error rate against `maxErrorRate`, as `reaches(maxErrorRate, rate)`).
 */
export function reaches(value: number, minimum: number): boolean {
  return value >= minimum - THRESHOLD_TOLERANCE;
}

/** The most decimals {@link formatBeside} shows: enough to tell apart any two values more than the tolerance apart. */
const MAX_DIGITS = 12;

/**
 * `value` with `digits` decimals, or as many more as it takes for the text to stay on the same side of
 * `threshold` as the value (never `1.000` for a reward that missed the threshold 1; `0.99999999` instead).
 */
export function formatBeside(value: number, threshold: number, digits = 3): string {
  const side = Math.sign(value - threshold);
  for (let d = digits; d <= MAX_DIGITS; d++) {
    const text = value.toFixed(d);
    if (Math.sign(Number(text) - threshold) === side) return text;
  }
  return String(value);
}
