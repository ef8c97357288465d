/**
 * Exact unit tests of the confidence sequence (src/node/stats/confidence-sequence.ts). Expected ends come from
 * Python 3.11 with scipy 1.17, not from this code: each end solved as a linear program (linprog) over row means
 * μ ∈ [0, 1]^R, min or max of their mean subject to ln M(μ) ≤ ln(2/α), with ln M(μ) summed run by run from its
 * definition, Σ λ(x − μ_row) − 4(x − c)² ψ(λ), the centre c = (sum + 1/2) / (runs + 1) before each run.
 */
import { describe, expect, it } from 'vitest';
import { addRun, bernsteinPsi, centreOf, emptyEvidence, MAX_BET, type RowEvidence, rowWeightedMean, sequenceBounds } from '../../src/node/stats/confidence-sequence.ts';

/** A row's evidence after `runs` of [reward, bet], each centred on the row's evidence before it, as the sampler does. */
const rowOf = (runs: [number, number][]): RowEvidence => runs.reduce((row, [x, bet]) => addRun(row, x, bet, centreOf(row)), emptyEvidence());
const repeat = (run: [number, number], times: number) => Array<[number, number]>(times).fill(run);

// Bets 0.8, 5 and 1.8: the lower end fills the largest first, so their order matters.
const mixed = () => [rowOf([[1, 0.2], [0, 0.2], [1, 0.2], [1, 0.2]]), rowOf(repeat([1, 0.5], 10)), rowOf(repeat([1, 0.3], 6))];

describe('the confidence sequence against linear programs', () => {
  it('lower end: the budget fills the row with the largest bet and spills into the next', () => {
    expect(sequenceBounds(mixed(), 0.5)).toEqual({ low: expect.closeTo(0.49812900765530455, 9), high: 1 });
    expect(sequenceBounds(mixed(), 0.05)).toEqual({ low: expect.closeTo(0.23915410322297326, 9), high: 1 });
  });

  it('upper end: the same on 1 − reward, mirroring the lower', () => {
    const mirrored = [rowOf([[0, 0.2], [1, 0.2], [0, 0.2], [0, 0.2]]), rowOf(repeat([0, 0.5], 10)), rowOf(repeat([0, 0.3], 6))];
    expect(sequenceBounds(mirrored, 0.5)).toEqual({ low: 0, high: expect.closeTo(0.5018709923446956, 9) });
  });

  it('graded rewards and a row without bets: nothing ruled out below, the upper end held by the bet rows', () => {
    const graded = [
      rowOf([0.25, 0, 0.5, 0, 0, 0.1, 0, 0].map((x): [number, number] => [x, 0.6])),
      rowOf(repeat([0, 0.4], 5)),
      rowOf([[1, 0.1], [0.5, 0.1]]),
      rowOf([[0.9, 0]]),
    ];
    expect(sequenceBounds(graded, 0.2)).toEqual({ low: 0, high: expect.closeTo(0.8002065258136336, 9) });
  });

  it('leaves rows without a run out of θ, and says [0, 1] with none', () => {
    expect(sequenceBounds([emptyEvidence(), ...mixed(), emptyEvidence()], 0.5)).toEqual(sequenceBounds(mixed(), 0.5));
    expect(sequenceBounds([], 0.05)).toEqual({ low: 0, high: 1 });
    expect(sequenceBounds([emptyEvidence()], 0.05)).toEqual({ low: 0, high: 1 });
  });
});

describe('a row’s evidence', () => {
  it('adds a run: its reward, square, bet, gain λx and penalty 4(x − c)² ψ(λ)', () => {
    const row = addRun(addRun(emptyEvidence(), 1, 0.5, 0.5), 0.5, 0.25, 0.75);
    // ψ(λ) = (−ln(1 − λ) − λ) / 4: ψ(0.5) = 0.0482867951…, ψ(0.25) = 0.00942027…
    expect(bernsteinPsi(0.5)).toBeCloseTo(0.04828679513998632, 15);
    expect(row).toEqual({
      runs: 2,
      sum: 1.5,
      sumOfSquares: 1.25,
      bet: 0.75,
      gain: 0.625,
      penalty: expect.closeTo(4 * 0.25 * bernsteinPsi(0.5) + 4 * 0.0625 * ((-Math.log(0.75) - 0.25) / 4), 15),
    });
  });

  it('is centred on its mean with half a run at 1/2: 1/2 before any run', () => {
    expect(centreOf(emptyEvidence())).toBe(0.5);
    expect(centreOf(rowOf([[1, 0.1], [1, 0.1], [0.5, 0.1]]))).toBe(3 / 4);
  });

  it('refuses rewards outside [0, 1] and bets outside [0, MAX_BET], and takes both edges', () => {
    for (const reward of [-0.1, 1.5, Number.NaN]) expect(() => addRun(emptyEvidence(), reward, 0.1, 0.5)).toThrow(`a reward in [0, 1] is needed, got ${reward}`);
    for (const bet of [-0.1, 0.95, Number.NaN]) expect(() => addRun(emptyEvidence(), 0.5, bet, 0.5)).toThrow(`a bet in [0, ${MAX_BET}] is needed, got ${bet}`);
    expect(addRun(addRun(emptyEvidence(), 0, 0, 0.5), 1, MAX_BET, 0.5)).toMatchObject({ runs: 2, sum: 1, bet: MAX_BET });
  });

  it('estimates θ as the mean of row means, rows without a run left out; null with none', () => {
    expect(rowWeightedMean([rowOf([[1, 0.1]]), emptyEvidence(), rowOf([...repeat([0, 0.1], 7), [1, 0.1]])])).toBeCloseTo((1 + 1 / 8) / 2, 12);
    expect(rowWeightedMean([])).toBeNull();
    expect(rowWeightedMean([emptyEvidence()])).toBeNull();
  });
});
