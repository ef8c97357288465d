/** Quantiles and probabilities of the distributions the paired tests need. Pure. */
import { logGamma, normalQuantile } from './quantiles.ts';

export { logGamma };

/**
 * The quantile of Student's t with `df` degrees of freedom: exact for 1 and 2, a Cornish–Fisher expansion
 * around the normal quantile beyond (error below 1e-3 at df 3, shrinking fast).
 * @throws RangeError when `p` is not in (0, 1) or `df` is not a positive integer.
 */
export function studentTQuantile(p: number, df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new RangeError(`studentTQuantile(): df must be a positive integer, got ${df}`);
  if (df === 1) return Math.tan(Math.PI * (p - 0.5));
  if (df === 2) return (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
  const z = normalQuantile(p);
  const z2 = z * z;
  const terms = [
    (z * (z2 + 1)) / 4,
    (z * ((5 * z2 + 16) * z2 + 3)) / 96,
    (z * (((3 * z2 + 19) * z2 + 17) * z2 - 15)) / 384,
    (z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945)) / 92160,
  ];
  return terms.reduce((t, term, i) => t + term / df ** (i + 1), z);
}

/**
 * P(X <= k) for X ~ Binomial(n, 1/2), summed from the largest term down so that no term underflows before it
 * matters (n may be in the millions).
 */
export function halfBinomialCdf(k: number, n: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (2 * k >= n) return 1 - halfBinomialCdf(n - k - 1, n);
  let term = Math.exp(logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1) - n * Math.LN2);
  let sum = 0;
  for (let i = k; i >= 0 && term > 0; i--) {
    sum += term;
    term *= i / (n - i + 1);
  }
  return Math.min(1, sum);
}
