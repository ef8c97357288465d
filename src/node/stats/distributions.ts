/** Quantiles and probabilities of the distributions the tests and intervals need. Pure, no dependencies. */

/**
 * The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9).
 * @throws RangeError when `p` is not in (0, 1).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile(): p must be in (0, 1), got ${p}`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) => (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

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

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits). */
export function logGamma(x: number): number {
  const g = [0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.6150291621406, 12.507343278686905, -0.13857109526572012, 9.984369578019572e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const y = x - 1;
  let sum = g[0]!;
  for (let i = 1; i < 9; i++) sum += g[i]! / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(sum);
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
