/** Quantiles and probabilities of the distributions the paired tests need. Pure. */
import { logGamma } from './quantiles.ts';

/**
 * P(X <= k) for X ~ Binomial(n, 1/2), summed from the largest term down so that no term underflows before it
 * matters (n may be in the millions). k ≥ n mirrors to a negative k: 0.
 */
export function halfBinomialCdf(k: number, n: number): number {
  if (k < 0) return 0;
  if (2 * k >= n) return 1 - halfBinomialCdf(n - k - 1, n);
  let term = Math.exp(logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1) - n * Math.LN2);
  let sum = 0;
  // The term after i = 0 is 0, so the sum ends there if no term underflowed before.
  for (let i = k; term > 0; i--) {
    sum += term;
    term *= i / (n - i + 1);
  }
  return Math.min(1, sum);
}
