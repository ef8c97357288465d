import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { suiteKeyOfRollout } from '../baseline/comparison-side.ts';
import { type JournalSuite, readJournal } from '../output/journal-reader.ts';
import { latestRun } from '../output/run-history.ts';
import { foreignFileMessage, isForeignFile } from '../output/own-files.ts';
import { SUMMARY_FILE, writeSummary } from '../output/run-outputs.ts';
import { createReporters } from '../reporters/create-reporters.ts';
import type { Terminal } from '../reporters/terminal.ts';
import { finishRun, type RunFacts } from '../run/finish-run.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { RunReport, SuiteReport } from '../types/run-report.ts';
import { buildSuiteReport } from '../run/suite-report.ts';
import { SuiteRecords } from '../output/suite-records.ts';
import { UsageError } from '../errors.ts';
import { exitOnceWritten } from './exit-once-written.ts';

interface MergedSuite {
  meta: JournalSuite;
  records: Map<string, RolloutRecord>;
}


function mergeJournals(dirs: string[]): MergedSuite[] {
  const suites = new Map<string, MergedSuite>();
  for (const dir of dirs) {
    const journal = readJournal(dir);
    for (const [key, meta] of journal.suites) {
      const merged = suites.get(key);
      if (!merged) suites.set(key, { meta, records: new Map() });
      else merged.meta = { ...merged.meta, durationMs: Math.max(merged.meta.durationMs, meta.durationMs), error: merged.meta.error ?? meta.error };
    }
    for (const [id, record] of journal.rollouts) suites.get(suiteKeyOfRollout(id))?.records.set(id, record);
  }
  return [...suites.values()];
}

/** The shards ran side by side: the merged run started with the first and lasted as long as the longest. */
function factsOf(dirs: string[]): RunFacts {
  const summaries = dirs.map((dir) => path.join(dir, 'summary.json')).filter(existsSync).map((file) => JSON.parse(readFileSync(file, 'utf8')));
  return {
    startedAt: summaries.map((s) => String(s.startedAt)).sort()[0] ?? new Date().toISOString(),
    durationMs: Math.max(0, ...summaries.map((s) => Number(s.durationMs) || 0)),
    interrupted: summaries.find((s) => s.interrupted)?.interrupted,
  };
}

/** The merged `summary.json`, in the output directory: never over a `summary.json` of the user's (`--outputDir .`). */
function writeMergedSummary(outputDir: string, report: RunReport): void {
  const file = path.join(outputDir, SUMMARY_FILE);
  if (isForeignFile(file, (head) => /^\{\s*"version": \d+,/.test(head))) throw new UsageError(foreignFileMessage(file, 'give merge-reports an --outputDir of its own'));
  writeSummary(outputDir, report);
}

/** `rollout-test merge-reports DIR...`: one set of reports from the output dirs of shards (`--shard i/n`). */
export async function mergeReports(dirs: string[], config: ResolvedConfig, terminal: Terminal): Promise<number> {
  if (dirs.length === 0) throw new UsageError('merge-reports needs the output directories of the shards, e.g. merge-reports shard-1 shard-2');
  // A shard's --outputDir holds its runs; the newest is the shard's run.
  const runDirs = dirs.map((dir) => path.resolve(config.root, dir)).map((dir) => (existsSync(path.join(dir, 'journal.jsonl')) ? dir : (latestRun(dir) ?? dir)));
  const missing = runDirs.filter((dir) => !existsSync(path.join(dir, 'journal.jsonl')));
  if (missing.length) throw new UsageError(`no journal.jsonl in ${missing.join(', ')}: pass the --outputDir of each shard`);
  const merged = mergeJournals(runDirs);
  const suites: SuiteReport[] = merged.map(({ meta, records }) => {
    const { stats: _, thresholdMissed: __, baseline: ___, regression: _____, passed: ____, noRollouts, durationMs, error, ...rest } = meta;
    const report = buildSuiteReport(rest, SuiteRecords.of(records.values()), durationMs, error);
    return records.size ? report : { ...report, noRollouts };
  });
  const report = finishRun(suites, factsOf(runDirs), config);
  writeMergedSummary(config.outputDir, report);
  const reporters = await createReporters(config, terminal);
  for (const suite of report.suites) reporters.onSuiteEnd(suite);
  await reporters.onRunEnd(report);
  return exitOnceWritten(reporters, reporters.verdict(report).exitCode);
}
