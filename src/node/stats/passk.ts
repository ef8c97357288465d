/**
 * Unbiased estimators over the `n` runs of one dataset row, `c` of which passed.
 * @module
 */

function checkCounts(n: number, c: number, k: number): void {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k)) {
    throw new RangeError(`n, c and k must be integers, got n=${n}, c=${c}, k=${k}`);
  }
  if (c < 0 || c > n) throw new RangeError(`c must be in [0, n], got n=${n}, c=${c}`);
  if (k < 1 || k > n) throw new RangeError(`k must be in [1, n], got n=${n}, k=${k}`);
}

/**
 * pass@k: the chance that at least one of `k` runs drawn without replacement from the `n` observed runs
 * passed, `1 - C(n-c, k) / C(n, k)` (Chen et al., 2021). Unbiased for the population pass@k.
 *
 * Computed as `1 - Π_{i=n-c+1..n} (1 - k/i)`: the binomial coefficients overflow long before `n` gets large,
 * the product never does.
 * @throws RangeError unless `n`, `c`, `k` are integers with `0 <= c <= n` and `1 <= k <= n`.
 */
export function passAtK(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  // Fewer than k failures: every draw of k runs holds a pass.
  // Stryker disable next-line ConditionalExpression,ArithmeticOperator: a shortcut; without it the product below meets the factor 1 - k/k = 0 and gives 1 as well
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/**
 * pass^k: the chance that all `k` runs drawn without replacement from the `n` observed runs passed,
 * `C(c, k) / C(n, k)`. Unbiased for the population pass^k (`p^k`), unlike `(c/n)^k`.
 * @throws RangeError unless `n`, `c`, `k` are integers with `0 <= c <= n` and `1 <= k <= n`.
 */
export function passHatK(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  let allPass = 1;
  // Π_{i<k} (c-i)/(n-i); reaches 0 on its own when c < k.
  for (let i = 0; i < k; i++) allPass *= (c - i) / (n - i);
  return allPass;
}

/**
 * The k values reported for `n` runs per row, as the seed SDK does: the powers of two up to `n`
 * (1, 2, 4, …). Empty when `n < 1`.
 */
export function kValues(n: number): number[] {
  const ks: number[] = [];
  for (let k = 1; k <= n; k *= 2) ks.push(k);
  return ks;
}
