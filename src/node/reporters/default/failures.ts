import type { RolloutRecord } from '../../run/rollout-record.ts';
import type { RunReport, SuiteReport } from '../../run/run-report.ts';
import { formatNumber, relative, userFrame } from '../format.ts';
import type { Terminal } from '../terminal.ts';

/** How many groups of failed or errored rollouts are shown in full; the rest are counted. */
const SHOWN = 50;

/** Runs of one row that went wrong the same way are one entry: the reader fixes them together. */
function groupKey(record: RolloutRecord): string {
  const error = record.error;
  return `${record.row}\0${record.status}\0${error ? `${error.category}\0${error.message}` : ''}`;
}

function groups(suite: SuiteReport): RolloutRecord[][] {
  const byKey = new Map<string, RolloutRecord[]>();
  for (const record of suite.records) {
    if (record.status !== 'failed' && record.status !== 'errored') continue;
    const key = groupKey(record);
    byKey.set(key, [...(byKey.get(key) ?? []), record]);
  }
  return [...byKey.values()].map((records) => records.sort((a, b) => a.run - b.run));
}

function heading(records: RolloutRecord[]): string {
  const [first] = records as [RolloutRecord];
  const row = first.rowId === undefined ? `row ${first.row}` : `row ${first.row} (${first.rowId})`;
  const runs = records.length === 1 ? `run ${first.run}` : `runs ${records.map((r) => r.run).join(', ')}`;
  return `${first.suite} › ${row} › ${runs}`;
}

function entry(records: RolloutRecord[], root: string, passThreshold: number, terminal: Terminal): string {
  const trials = records.flatMap((r) => (r.trialDir ? [`   ${terminal.colors.dim(`trial ${relative(root, r.trialDir)}`)}\n`] : [])).join('');
  return entryHead(records, root, passThreshold, terminal) + trials;
}

function entryHead(records: RolloutRecord[], root: string, passThreshold: number, { colors }: Terminal): string {
  const [first] = records as [RolloutRecord];
  const name = colors.bold(heading(records));
  if (first.status === 'failed') {
    const rewards = records.map((r) => formatNumber(r.reward)).join(', ');
    return ` ${colors.bgYellow(colors.black(' FAIL '))} ${name}\n   reward ${rewards} below the pass threshold ${passThreshold}\n`;
  }
  return errorEntry(` ${colors.bgRed(colors.white(' ERROR '))} ${name} ${colors.red(first.error!.category)} ${colors.dim(`in ${first.error!.phase}`)}`, first.error!, root, colors);
}

function errorEntry(title: string, error: NonNullable<RolloutRecord['error']>, root: string, colors: Terminal['colors']): string {
  const frame = userFrame(error.stack, root);
  return `${title}\n   ${error.message.split('\n').join('\n   ')}\n${frame ? colors.dim(`   at ${frame}\n`) : ''}`;
}

/** Each failed or errored rollout (grouped by row and cause) and each suite that failed to load. */
export function failureDetails(report: RunReport, terminal: Terminal): string {
  const { colors } = terminal;
  const out: string[] = [];
  let hidden = 0;
  for (const suite of report.suites) {
    if (suite.error) {
      const name = relative(report.root, suite.file) + (suite.name === suite.file ? '' : ` › ${suite.name}`);
      out.push(errorEntry(` ${colors.bgRed(colors.white(' ERROR '))} ${colors.bold(name)} ${colors.red('suite failed')}`, suite.error, report.root, colors));
    }
    for (const records of groups(suite)) {
      if (out.length < SHOWN) out.push(entry(records, report.root, suite.passThreshold, terminal));
      else hidden += records.length;
    }
  }
  if (hidden) out.push(colors.dim(` … and ${hidden} more rollouts (all of them are in the JSON report and the journal)\n`));
  return out.length ? `\n${colors.red(colors.bold('Failed and errored rollouts'))}\n\n${out.join('\n')}` : '';
}
