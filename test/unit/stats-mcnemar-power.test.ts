/**
 * The exact power of McNemar's test and the MDE built on it, against an independent enumeration in Python (scipy
 * 1.17): each outcome (d discordant pairs, b of them going A's way) is rejected when scipy's two-sided
 * `binomtest(b, d, 0.5).pvalue` is below α, weighted by `binom.pmf(d, n, q) · binom.pmf(b, d, 1/2 + δ/(2q))`.
 */
import { describe, expect, it } from 'vitest';
import { mcnemarMde, mcnemarPower } from '../../src/node/stats/mcnemar-power.ts';
import { mcnemarExact } from '../../src/node/stats/paired-test.ts';

describe('mcnemarPower', () => {
  it('is the exact chance of p < α, summed over the outcomes', () => {
    expect(mcnemarPower(20, 0.5, 0.3, 0.05)).toBeCloseTo(0.3670826487139957, 12);
    expect(mcnemarPower(40, 0.3, 0.25, 0.05)).toBeCloseTo(0.8382636148566458, 12);
    expect(mcnemarPower(12, 0.4, 0.2, 0.05)).toBeCloseTo(0.053571854926000015, 12);
  });

  it('is the same for a difference either way', () => {
    expect(mcnemarPower(20, 0.5, -0.3, 0.05)).toBeCloseTo(0.3670826487139957, 12);
  });

  it('when every discordant pair goes one way (δ = ±q), is the chance of enough discordant pairs', () => {
    // Six pairs all one way give p = 2/64 < 0.05, five give 2/32: P(Binomial(20, 0.5) >= 6).
    expect(mcnemarPower(20, 0.5, 0.5, 0.05)).toBeCloseTo(0.9793052673339845, 12);
    expect(mcnemarPower(20, 0.5, -0.5, 0.05)).toBeCloseTo(0.9793052673339845, 12);
    expect(mcnemarPower(6, 1, 1, 0.05)).toBe(1);
    expect(mcnemarPower(5, 1, 1, 0.05)).toBe(0);
  });

  it('does not reject a p-value equal to α', () => {
    // α = p of six discordant pairs all one way (2/64), as the engine computes it: six such pairs are not below it.
    const alpha = mcnemarExact(6, 6).pValue;
    expect(alpha).toBeCloseTo(1 / 32, 15);
    expect(mcnemarPower(12, 0.4, 0.2, alpha)).toBeCloseTo(0.019290260458000016, 12);
  });

  it('is the test size, below α, at δ = 0', () => {
    expect(mcnemarPower(30, 0.4, 0, 0.05)).toBeCloseTo(0.024376717549905263, 12);
  });
});

describe('mcnemarMde', () => {
  // The first δ on a grid of step 5e-4 whose power (discordance min(1, max(q + δ²/2, δ))) reaches 80%.
  const expected: Array<[n: number, q: number, mde: number]> = [
    [12, 0.5, 0.642],
    [20, 0.25, 0.3665],
    [6, 0.3, 0.9635],
  ];
  const discordance = (q: number, delta: number) => Math.min(1, Math.max(q + (delta * delta) / 2, delta));

  it.each(expected)('n = %i, discordance %f: the smallest δ with 80%% power, to 1e-3', (n, q, reference) => {
    const mde = mcnemarMde(n, q, 0.05, 0.8)!;
    expect(Math.abs(mde - reference)).toBeLessThanOrEqual(1e-3);
    expect(mcnemarPower(n, discordance(q, mde), mde, 0.05)).toBeGreaterThanOrEqual(0.8);
    expect(mcnemarPower(n, discordance(q, mde - 1e-3), mde - 1e-3, 0.05)).toBeLessThan(0.8);
  });

  it('is null when even δ = 1 is not detected: five pairs all one way give p = 1/16', () => {
    expect(mcnemarMde(5, 0.3, 0.05, 0.8)).toBeNull();
  });

  it('takes a power reached exactly as reached: power 1 only at δ = 1, power 0 at any δ (the bisection step, 2^-10)', () => {
    expect(mcnemarMde(12, 0.5, 0.05, 1)).toBe(1);
    expect(mcnemarMde(5, 0.3, 0.05, 0)).toBe(2 ** -10);
  });
});
