import type { RolloutRecord } from '../../types/rollout-record.ts';
import type { RunReport } from '../../types/run-report.ts';
import { formatLocation, userFrame } from '../../stack/user-frame.ts';
import { evidenceLines } from '../failure-detail.ts';
import { failureGroups, groupHeading } from '../failure-groups.ts';
import { relative } from '../format.ts';
import { formatBeside } from '../../stats/threshold.ts';
import type { Terminal } from '../terminal.ts';

/** How many groups of failed or errored rollouts are shown in full; the rest are counted. */
const SHOWN = 50;

const indent = (lines: string[]) => lines.map((line) => `   ${line}\n`).join('');

/** The evidence of the group's first rollout, named when the group has several. */
function evidence(record: RolloutRecord, runs: number, colors: Terminal['colors']): string[] {
  const lines = evidenceLines(record, { removed: colors.green, added: colors.red, dim: colors.dim });
  return lines.length && runs > 1 ? [colors.dim(`run ${record.run}:`), ...lines] : lines;
}

function entry(records: RolloutRecord[], root: string, passThreshold: number, terminal: Terminal): string {
  // Each run of the group has its own trial, named once here (the details above are the first run's).
  const trials = records.flatMap((r) => (r.trialDir ? [`   ${terminal.colors.dim(`trial: ${relative(root, r.trialDir)}`)}\n`] : [])).join('');
  return entryHead(records, root, passThreshold, terminal) + trials;
}

function entryHead(records: RolloutRecord[], root: string, passThreshold: number, { colors }: Terminal): string {
  const [first] = records as [RolloutRecord];
  const name = colors.bold(groupHeading(records));
  if (first.status === 'failed') {
    const rewards = records.map((r) => (r.reward === null ? 'none' : formatBeside(r.reward, passThreshold))).join(', ');
    const outcome = `reward ${rewards} below the pass threshold ${passThreshold}`;
    return ` ${colors.bgYellow(colors.black(' FAIL '))} ${name}\n${indent([outcome, ...evidence(first, records.length, colors)])}`;
  }
  const error = first.error!;
  const title = ` ${colors.bgRed(colors.white(' ERROR '))} ${name} ${colors.red(error.category)} ${colors.dim(`in ${error.phase}`)}`;
  const frame = first.details?.frame;
  const where = frame ? [colors.dim(`at ${formatLocation(root, frame)}`)] : [];
  return `${title}\n${indent([...error.message.split('\n'), ...where, ...evidence(first, records.length, colors)])}`;
}

function errorEntry(title: string, error: NonNullable<RolloutRecord['error']>, root: string, colors: Terminal['colors']): string {
  const frame = userFrame(error.stack);
  return `${title}\n${indent([...error.message.split('\n'), ...(frame ? [colors.dim(`at ${formatLocation(root, frame)}`)] : [])])}`;
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
    for (const records of failureGroups(suite)) {
      if (out.length < SHOWN) out.push(entry(records, report.root, suite.passThreshold, terminal));
      else hidden += records.length;
    }
  }
  if (hidden) out.push(colors.dim(` … and ${hidden} more rollouts (all of them are in the JSON report and the journal)\n`));
  return out.length ? `\n${colors.red(colors.bold('Failed and errored rollouts'))}\n\n${out.join('\n')}` : '';
}
