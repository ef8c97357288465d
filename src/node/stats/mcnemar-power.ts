import { halfBinomialCdf, logGamma } from './distributions.ts';

/** P(X = k) for X ~ Binomial(n, p). */
function binomialPmf(k: number, n: number, p: number): number {
  if (p <= 0) return k === 0 ? 1 : 0;
  if (p >= 1) return k === n ? 1 : 0;
  return Math.exp(logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1) + k * Math.log(p) + (n - k) * Math.log1p(-p));
}

/** For each number of discordant pairs d ≤ n, the largest count k with 2·P(X ≤ k) < α (−1 when none rejects). */
function criticalCounts(n: number, alpha: number): number[] {
  const critical: number[] = [];
  let k = -1;
  for (let d = 0; d <= n; d++) {
    while (k + 1 < d / 2 && 2 * halfBinomialCdf(k + 1, d) < alpha) k++;
    critical.push(k);
  }
  return critical;
}

/**
 * Power of the two-sided exact McNemar test over `n` pairs when a pair is discordant with probability `discordance`
 * and the true difference of the paired rates is `delta` (so a discordant pair went B's way with probability
 * (1 + delta / discordance) / 2): the chance of a p-value below α, summed exactly over the outcomes.
 */
export function mcnemarPower(n: number, discordance: number, delta: number, alpha: number, critical = criticalCounts(n, alpha)): number {
  const up = (1 + delta / discordance) / 2;
  let power = 0;
  for (let d = 1; d <= n; d++) {
    const k = critical[d]!;
    if (k < 0) continue;
    let rejected = 0;
    for (let b = 0; b <= k; b++) rejected += binomialPmf(b, d, up) + binomialPmf(d - b, d, up);
    power += binomialPmf(d, n, discordance) * rejected;
  }
  return power;
}

/**
 * The smallest true difference the exact McNemar test detects with `power` over `n` pairs, at the discordance
 * rate `discordance` (a difference needs at least as many discordant pairs, so the rate is raised to it when
 * smaller). Bisection to 1e-3. `null` when even a difference of 1 is not detected that often (too few pairs).
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
