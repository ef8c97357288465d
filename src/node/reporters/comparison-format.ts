import type { SuiteComparison } from '../stats/index.ts';
import type { ComparisonSource } from '../types/run-report.ts';
import { formatNumber } from './format.ts';

const signed = (value: number) => `${value >= 0 ? '+' : '−'}${formatNumber(Math.abs(value))}`;

/** `improved`, `regressed`, or `no detectable change; could detect ±0.120` (the MDE always goes with it). */
export function verdictText(c: Pick<SuiteComparison, 'verdict' | 'mde' | 'pairedRows'>): string {
  if (c.verdict !== 'no detectable change') return c.verdict;
  if (c.pairedRows === 0) return 'no detectable change; no rows in common';
  return c.mde === null ? 'no detectable change; too few rows to detect any change' : `no detectable change; could detect ±${formatNumber(c.mde)}`;
}

/** `Δ +0.100 [+0.020, +0.180]`, or '' without paired rows. */
export function deltaText(c: Pick<SuiteComparison, 'delta' | 'low' | 'high'>): string {
  if (c.delta === null) return '';
  return c.low === null || c.high === null ? `Δ ${signed(c.delta)}` : `Δ ${signed(c.delta)} [${signed(c.low)}, ${signed(c.high)}]`;
}

/** `p 0.003 (adjusted 0.006)`, or '' without a test. */
export function pValueText(c: Pick<SuiteComparison, 'pValue' | 'pAdjusted'>): string {
  return c.pValue === null ? '' : `p ${formatNumber(c.pValue)} (adjusted ${formatNumber(c.pAdjusted)})`;
}

/** `run 20261203T… (started …, path)` or `baseline file path (saved …, from run …)`: what a comparison used. */
export function sourceText(source: ComparisonSource): string {
  if (source.kind === 'run') return `run ${source.run} (started ${source.time}, ${source.path})`;
  return `baseline file ${source.path} (saved ${source.time}${source.run ? `, from run ${source.run}` : ''})`;
}
