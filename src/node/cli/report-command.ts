import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { readJournal } from '../output/journal-reader.ts';
import { findRun } from '../output/run-history.ts';
import { HtmlReporter } from '../reporters/html/html-reporter.ts';
import type { Terminal } from '../reporters/terminal.ts';
import type { RunReport } from '../types/run-report.ts';
import { SuiteRecords } from '../output/suite-records.ts';
import { UsageError } from '../errors.ts';

/** A stored run's report: its `summary.json` with each suite's rollouts from its journal, in the run's order. */
function storedReport(runDir: string): RunReport {
  const summaryFile = path.join(runDir, 'summary.json');
  if (!existsSync(summaryFile)) throw new UsageError(`${runDir} has no summary.json: the run did not finish (finish it with --resume)`);
  const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunReport;
  const records = [...readJournal(runDir).rollouts.values()];
  const suites = summary.suites.map((suite) => ({
    ...suite,
    records: SuiteRecords.of(records.filter((r) => r.id.startsWith(`${suite.key}.`)).sort((a, b) => a.row - b.row || a.run - b.run)),
  }));
  return { ...summary, suites, runDir };
}

/** `rollout-test report [RUN]`: the HTML report of a stored run (`latest` by default, an id or a run folder). */
export async function reportCommand(run: string | undefined, config: ResolvedConfig, terminal: Terminal): Promise<number> {
  const runDir = findRun(config.outputDir, config.root, run ?? 'latest');
  if (!runDir) throw new UsageError(`no run ${run ?? 'latest'} in ${path.join(config.outputDir, 'runs')}`);
  const flag = config.outputFile;
  const given = typeof flag === 'string' ? flag : flag?.html;
  const outputFile = given === undefined ? undefined : path.resolve(config.root, given);
  new HtmlReporter(terminal, outputFile, config.outputDir).onRunEnd(storedReport(runDir));
  return 0;
}
