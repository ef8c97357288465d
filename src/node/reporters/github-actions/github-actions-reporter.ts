import { appendFileSync, statSync } from 'node:fs';
import type { RunReport } from '../../types/run-report.ts';
import type { Reporter } from '../../types/reporter.ts';
import type { Terminal } from '../terminal.ts';
import { annotations } from './annotations.ts';
import { MAX_SUMMARY_BYTES, jobSummary } from './job-summary.ts';

/** The file is the step's: what its other tools wrote there counts against GitHub's limit too. */
function appendSummary(file: string, report: RunReport): void {
  const written = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  appendFileSync(file, jobSummary(report, MAX_SUMMARY_BYTES - written));
}

/**
 * For GitHub Actions, as Vitest's reporter of that name: an `::error` annotation per failed or errored rollout
 * group, at the user's frame or the suite's `defineRollout` call, and a Markdown job summary appended to
 * `$GITHUB_STEP_SUMMARY` (when set). On by default when `GITHUB_ACTIONS=true`.
 */
export class GithubActionsReporter implements Reporter {
  constructor(
    private readonly terminal: Terminal,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  onRunEnd(report: RunReport): void {
    for (const command of annotations(report, this.env.GITHUB_WORKSPACE ?? report.root)) this.terminal.command(command);
    const summaryFile = this.env.GITHUB_STEP_SUMMARY;
    if (summaryFile) appendSummary(summaryFile, report);
  }
}
