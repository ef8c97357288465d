import { halfBinomialCdf } from './distributions.ts';
import { logGamma } from './quantiles.ts';

/** P(X = k) for X ~ Binomial(n, p). */
function binomialPmf(k: number, n: number, p: number): number {
  if (p <= 0) return k === 0 ? 1 : 0;
  if (p >= 1) return k === n ? 1 : 0;
  return Math.exp(logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1) + k * Math.log(p) + (n - k) * Math.log1p(-p));
}

/**
 * For each number of discordant pairs d ≤ n, the largest count k with 2·P(X ≤ k) < α (−1 when none rejects). For
 * α < 1 that k is below d/2 (the lower tail up to d/2 holds half the mass), so the search needs no other bound.
 */
function criticalCounts(n: number, alpha: number): number[] {
  const critical: number[] = [];
  let k = -1;
  for (let d = 0; d <= n; d++) {
    while (2 * halfBinomialCdf(k + 1, d) < alpha) k++;
    critical.push(k);
  }
  return critical;
}

/**
 * Power of the two-sided exact McNemar test over `n` pairs when a pair is discordant with probability `discordance`
 * and the true difference of the paired rates is `delta` (so a discordant pair went B's way with probability
 * 1/2 + delta / (2·discordance)): the chance of a p-value below α, summed exactly over the outcomes.
 */
export function mcnemarPower(n: number, discordance: number, delta: number, alpha: number, critical = criticalCounts(n, alpha)): number {
  const lean = delta / (2 * discordance);
  // Stryker disable next-line ArithmeticOperator: 1/2 − lean has the same power, the rejection region being symmetric
  const up = 0.5 + lean;
  let power = 0;
  for (let d = 1; d <= n; d++) {
    const k = critical[d]!;
    let rejected = 0;
    for (let b = 0; b <= k; b++) rejected += binomialPmf(b, d, up) + binomialPmf(d - b, d, up);
    power += binomialPmf(d, n, discordance) * rejected;
  }
  return power;
}

/**
 * The smallest true difference the exact McNemar test detects with `power` over `n` pairs, at the discordance
 * rate `discordance` when there is no difference. A difference δ raises the rate by δ²/2 (what two independent
 * pass rates δ apart add to it), and to at least δ (a difference needs as many discordant pairs); at most 1.
 * Bisection to 1e-3. `null` when even a difference of 1 is not detected that often (too few pairs); α below 1.
 */
export function mcnemarMde(n: number, discordance: number, alpha: number, power: number): number | null {
  const critical = criticalCounts(n, alpha);
  const powerAt = (delta: number) => mcnemarPower(n, Math.min(1, Math.max(discordance + (delta * delta) / 2, delta)), delta, alpha, critical);
  if (powerAt(1) < power) return null;
  let [low, high] = [0, 1];
  while (high - low > 1e-3) {
    const mid = (low + high) / 2;
    if (powerAt(mid) >= power) high = mid;
    else low = mid;
  }
  return high;
}
