/**
 * Σ (v − centre)² over `values`: exactly 0 when every value is the same. The computed mean of equal values can
 * differ from them in its last bits (0.7 three times: a sum of squares of ~1e-33 where 0 is right), and a spread
 * that small, taken as measured, gives a zero-width interval or a minimum detectable effect of 0.
 */
export function sumOfSquares(values: readonly number[], centre: number): number {
  const first = values[0];
  let sum = 0;
  let same = true;
  for (const v of values) {
    sum += (v - centre) ** 2;
    same &&= v === first;
  }
  return same ? 0 : sum;
}
