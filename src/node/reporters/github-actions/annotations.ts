import path from 'node:path';
import type { RolloutRecord } from '../../types/rollout-record.ts';
import type { RunReport, SuiteReport } from '../../types/run-report.ts';
import { type SourceLocation, userFrame } from '../../stack/user-frame.ts';
import { detailLines, trialLines } from '../failure-detail.ts';
import { failureGroups, groupHeading } from '../failure-groups.ts';

/** GitHub shows 10 error annotations per step and 50 per job; more are noise. */
const MAX_ANNOTATIONS = 50;

const escapeData = (text: string) => text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (text: string) => escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** A workflow command `::error file=…,line=…,col=…,title=…::message`; paths relative to the workspace. */
function errorCommand(where: SourceLocation, title: string, message: string, workspace: string): string {
  const file = path.relative(workspace, where.file).split(path.sep).join('/');
  const props = `file=${escapeProperty(file)},line=${where.line},col=${where.column},title=${escapeProperty(title)}`;
  return `::error ${props}::${escapeData(message)}\n`;
}

/** The suite's `defineRollout` call, else the top of its file. */
const suiteLocation = (suite: SuiteReport): SourceLocation => suite.definedAt ?? { file: suite.file, line: 1, column: 1 };

/** An errored rollout points at the user's frame in its stack; a failed one at its suite's `defineRollout`. */
function rolloutAnnotation(records: RolloutRecord[], suite: SuiteReport, root: string, workspace: string): string {
  const [first] = records as [RolloutRecord];
  const where = first.details?.frame ?? suiteLocation(suite);
  const outcome = first.status === 'failed'
    ? `reward ${records.map((r) => r.reward ?? 'none').join(', ')} below the pass threshold ${suite.passThreshold}`
    : `${first.error?.category} in ${first.error?.phase}`;
  const detail = first.status === 'failed' ? detailLines(first, root) : detailLines(first, root).slice(1);
  return errorCommand(where, `${groupHeading(records)}: ${outcome}`, [first.error?.message ?? outcome, ...detail, ...trialLines(first)].join('\n'), workspace);
}

function suiteAnnotations(suite: SuiteReport, workspace: string): string[] {
  const out: string[] = [];
  if (suite.error) {
    const where = userFrame(suite.error.stack) ?? suiteLocation(suite);
    out.push(errorCommand(where, `${suite.name === suite.file ? 'load error' : suite.name}: ${suite.error.category} in ${suite.error.phase}`, suite.error.message, workspace));
  }
  if (suite.thresholdMissed) out.push(errorCommand(suiteLocation(suite), `${suite.name}: threshold missed`, suite.thresholdMissed, workspace));
  if (suite.regression) out.push(errorCommand(suiteLocation(suite), `${suite.name}: ${suite.regression}`, `${suite.regression} (--fail-on-regression)`, workspace));
  return out;
}

/**
 * The run's error annotations: a suite that failed to load or missed its threshold, and each group of failed
 * or errored rollouts (grouped by row and cause, as in the terminal), at most 50.
 */
export function annotations(report: RunReport, workspace: string): string[] {
  const out: string[] = [];
  for (const suite of report.suites) {
    out.push(...suiteAnnotations(suite, workspace));
    for (const records of failureGroups(suite)) out.push(rolloutAnnotation(records, suite, report.root, workspace));
  }
  return out.slice(0, MAX_ANNOTATIONS);
}
