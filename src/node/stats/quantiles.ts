/**
 * Quantiles of the normal and Student t distributions, for confidence intervals. Pure numerics, no tables.
 * @module
 */

/** Coefficients of Acklam's rational approximation of the normal quantile (relative error below 1.2e-9). */
const A = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
const B = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
const C = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
const P_LOW = 0.02425;

const poly = (coefficients: readonly number[], x: number) => coefficients.reduce((sum, c) => sum * x + c, 0);

/** The `p`-quantile of the standard normal distribution, `p` in (0, 1). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1), got ${p}`);
  if (p < P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(C, q) / (poly(D, q) * q + 1);
  }
  if (p > 1 - P_LOW) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (poly(A, r) * q) / (poly(B, r) * r + 1);
}

/** log Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits). */
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
 * Continued fraction of the regularized incomplete beta function (Lentz's method), for x < (a + 1) / (a + b + 2),
 * where it converges fast (at most about 50 rounds for the t tails) and its first denominator is above 0.
 */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 / (1 - ((a + b) * x) / (a + 1));
  let h = d;
  for (let m = 1; m <= 300; m++) {
    for (const numerator of [(m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m)), (-(a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))]) {
      d = 1 + numerator * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + numerator / c;
      if (Math.abs(c) < tiny) c = tiny;
      h *= d * c;
    }
    // Stryker disable next-line ArithmeticOperator: a test that never passes only runs the rounds up to the cap
    if (Math.abs(d * c - 1) < 1e-14) break;
  }
  return h;
}

/**
 * The regularized incomplete beta function I_x(a, b), x in [0, 1] (at 0 and 1 `front` is 0), given `y` = 1 − x
 * too: near x = 1, 1 − x computed from x keeps few of its digits.
 */
function incompleteBeta(x: number, y: number, a: number, b: number): number {
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(y));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, y)) / b;
}

/** P(T > t) for t >= 0 and Student's t with `df` degrees of freedom. */
function studentUpperTail(t: number, df: number): number {
  const square = t * t;
  return 0.5 * incompleteBeta(df / (df + square), square / (df + square), df / 2, 0.5);
}

const tCache = new Map<string, number>();

/**
 * The `p`-quantile of Student's t with `df` (> 0, not necessarily whole) degrees of freedom, `p` in [0.5, 1),
 * by bisection on the tail: intervals need it for a handful of (p, df) pairs, so it is cached.
 */
export function studentQuantile(p: number, df: number): number {
  if (!(p >= 0.5 && p < 1)) throw new RangeError(`p must be in [0.5, 1), got ${p}`);
  if (!(df > 0)) throw new RangeError(`df must be positive, got ${df}`);
  if (df > 1e7) return normalQuantile(p);
  const key = `${p}:${df}`;
  const quantile = tCache.get(key) ?? tailBisection(p, df);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: it bounds the memory; clearing changes no result
  if (tCache.size > 10_000) tCache.clear();
  tCache.set(key, quantile);
  return quantile;
}

/** The t such that P(T > t) = 1 − p: bracketed by doubling, then 100 halvings (to the precision of a double). */
function tailBisection(p: number, df: number): number {
  let low = 0;
  let high = 1;
  while (studentUpperTail(high, df) > 1 - p) high *= 2;
  for (let i = 0; i < 100; i++) {
    const middle = (low + high) / 2;
    if (studentUpperTail(middle, df) > 1 - p) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}
