import type { RunComparison } from '../../baseline/compare-sides.ts';
import { formatNumber } from '../format.ts';
import { TerminalTable } from '../default/terminal-table.ts';
import type { Terminal } from '../terminal.ts';
import { deltaText, sourceText, verdictText } from '../comparison-format.ts';

/** Flipped rows a table lists per suite; the JSON and HTML reports list them all. */
const FLIPPED_SHOWN = 10;

const passes = (r: { passes: number | null; runs: number }) => (r.passes === null ? '?' : `${r.passes}/${r.runs}`);

function flippedLines(comparison: RunComparison): string[] {
  return comparison.suites.flatMap((suite) => {
    if (!suite.flipped.length) return [];
    const shown = suite.flipped.slice(0, FLIPPED_SHOWN).map((f) => `  row ${f.row}: A passed ${passes(f.a)} (reward ${formatNumber(f.a.meanReward)}) → B passed ${passes(f.b)} (reward ${formatNumber(f.b.meanReward)})`);
    const more = suite.flipped.length > FLIPPED_SHOWN ? [`  … and ${suite.flipped.length - FLIPPED_SHOWN} more (see --reporter json or html)`] : [];
    return [`Flipped rows of ${suite.name}:`, ...shown, ...more];
  });
}

/** `rollout-test compare` on the terminal: which runs, a table of the suites, and the rows that flipped. */
export function compareTable(comparison: RunComparison, terminal: Terminal): string {
  const { colors } = terminal;
  const table = new TerminalTable(['Suite', 'Rows', 'Δ (B − A) [95% CI]', 'p (Holm)', 'Verdict', 'Test'], colors);
  for (const s of comparison.suites) {
    const paint = s.verdict === 'regressed' ? colors.red : s.verdict === 'improved' ? colors.green : (text: string) => text;
    table.push([s.name, String(s.pairedRows), deltaText(s) || '–', s.pValue === null ? '–' : `${formatNumber(s.pValue)} (${formatNumber(s.pAdjusted)})`, paint(verdictText(s)), s.test ?? '–']);
  }
  const only = [
    ...comparison.onlyInA.map((key) => `Only in A (not compared): ${key}`),
    ...comparison.onlyInB.map((key) => `Only in B (not compared): ${key}`),
  ];
  const lines = [`A: ${sourceText(comparison.a)}`, `B: ${sourceText(comparison.b)}`, table.toString(), ...only, ...flippedLines(comparison)];
  return `${lines.join('\n')}\n`;
}

/** `compare --reporter json`: the comparison, machine-readable (`version` names the shape). */
export function compareJson(comparison: RunComparison): string {
  return `${JSON.stringify({ version: 1, ...comparison }, null, 2)}\n`;
}
