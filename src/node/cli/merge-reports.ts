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
import { budgetReport, finishRun, type RunFacts } from '../run/finish-run.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { BudgetReport, RunReport, SuiteReport } from '../types/run-report.ts';
import type { SuiteStatistics } from '../stats/index.ts';
import { RunBudget } from '../cost/budget.ts';
import { buildSuiteReport, markPartial } from '../run/suite-report.ts';
import { SuiteRecords } from '../output/suite-records.ts';
import { UsageError } from '../errors.ts';
import { exitOnceWritten } from './exit-once-written.ts';

interface MergedSuite {
  meta: JournalSuite;
  records: Map<string, RolloutRecord>;
  /** How many of the journals hold the suite. */
  shards: number;
}

function mergeJournals(dirs: string[]): MergedSuite[] {
  const suites = new Map<string, MergedSuite>();
  const journals = dirs.map((dir) => readJournal(dir));
  checkShards(dirs, journals.map((journal) => journal.shard));
  for (const journal of journals) {
    for (const [key, meta] of journal.suites) {
      const merged = suites.get(key);
      if (!merged) suites.set(key, { meta, records: new Map(), shards: 1 });
      else {
        merged.meta = { ...merged.meta, durationMs: Math.max(merged.meta.durationMs, meta.durationMs), error: merged.meta.error ?? meta.error };
        merged.shards++;
      }
    }
    for (const [id, record] of journal.rollouts) suites.get(suiteKeyOfRollout(id))?.records.set(id, record);
  }
  return [...suites.values()];
}

/**
 * Each shard of the split run once, and all of them: a shard missing (or given twice in its place) would leave its
 * rows out of the merge, and a suite whose failing rows it held would pass. Runs that were not shards (none says
 * `--shard`) are merged as they are.
 */
function checkShards(dirs: string[], shards: Array<[number, number] | undefined>): void {
  if (shards.every((shard) => shard === undefined)) return;
  const unsharded = dirs.filter((_, i) => shards[i] === undefined);
  if (unsharded.length) throw new UsageError(`${unsharded.join(', ')} did not run with --shard, the others did: merge-reports joins the shards of one run`);
  const given = shards.map((shard) => shard!.join('/'));
  const count = shards[0]![1];
  const expected = Array.from({ length: count }, (_, i) => `${i + 1}/${count}`);
  const twice = given.filter((shard, i) => given.indexOf(shard) !== i);
  const missing = expected.filter((shard) => !given.includes(shard));
  const foreign = given.filter((shard) => !expected.includes(shard));
  if (twice.length + missing.length + foreign.length === 0) return;
  const problems = [missing.length && `missing ${missing.join(', ')}`, twice.length && `given twice ${[...new Set(twice)].join(', ')}`, foreign.length && `not of ${count} shards ${foreign.join(', ')}`].filter(Boolean);
  throw new UsageError(`merge-reports needs each of the ${count} shards once (${problems.join('; ')}): their rows would be missing from the merge`);
}

/**
 * A merged suite's report from its records. Its interval and `adaptive` are the stored ones when one journal holds
 * the whole adaptive suite (`--target-width` is never sharded): the confidence sequence depends on the order of
 * its rounds, which the records alone do not tell. A suite with rollouts skipped for the budget in any shard is partial.
 */
function mergedSuiteReport({ meta, records, shards }: MergedSuite): SuiteReport {
  const { stats, thresholdMissed: _, baseline: __, regression: ___, passed: ____, partial: _____, noRollouts, durationMs, error, ...rest } = meta;
  const adaptive = shards === 1 && stats.adaptive ? (fresh: SuiteStatistics) => ({ ...fresh, meanReward: stats.meanReward, adaptive: stats.adaptive }) : undefined;
  const report = buildSuiteReport(rest, SuiteRecords.of(records.values()), durationMs, error, adaptive);
  if ([...records.values()].some((record) => record.skipReason === 'budget')) markPartial(report);
  return records.size ? report : { ...report, noRollouts };
}

/** The shards' `summary.json` files (a shard killed before its end has none). */
function readSummaries(dirs: string[]): Partial<RunReport>[] {
  return dirs.map((dir) => path.join(dir, SUMMARY_FILE)).filter(existsSync).map((file) => JSON.parse(readFileSync(file, 'utf8')));
}

/** The entries of a list in a shard's summary; none when what it holds there is no list. */
const entriesOf = <T>(list: T[] | undefined): T[] => (Array.isArray(list) ? list : []);

/** The shards ran side by side: the merged run started with the first and lasted as long as the longest. */
function factsOf(summaries: Partial<RunReport>[], suites: SuiteReport[], config: ResolvedConfig): RunFacts {
  return {
    startedAt: summaries.map((s) => String(s.startedAt)).sort()[0] ?? new Date().toISOString(),
    durationMs: Math.max(0, ...summaries.map((s) => Number(s.durationMs) || 0)),
    interrupted: summaries.find((s) => s.interrupted)?.interrupted,
    budget: mergedBudget(summaries, suites, config),
    // Every shard left its suites out (none held a selected row): nothing ran, which is never a pass.
    noRollouts: suites.length === 0 ? `none of the ${summaries.length} shards ran a rollout` : undefined,
    // A fault a shard heard outside its rollouts' results failed that shard: it fails the merged run too.
    lateFaults: summaries.flatMap((s) => entriesOf(s.lateFaults)),
    unhandledErrors: summaries.flatMap((s) => entriesOf(s.unhandledErrors)),
  };
}

/**
 * The shards' budgets as one: each shard had its own caps, so the merged caps are their sums, against the spend of
 * every recorded token of the merged rollouts (as a run counts it); none when no shard had a budget.
 */
function mergedBudget(summaries: Partial<RunReport>[], suites: SuiteReport[], config: ResolvedConfig): BudgetReport | undefined {
  const budgets = summaries.flatMap((s) => (s.budget ? [s.budget] : []));
  if (budgets.length === 0) return undefined;
  const sum = (cap: 'tokens' | 'costUsd') => (budgets.some((b) => b[cap] !== undefined) ? budgets.reduce((total, b) => total + (b[cap] ?? 0), 0) : undefined);
  const budget = new RunBudget({ tokens: sum('tokens'), costUsd: sum('costUsd') }, config.prices);
  for (const suite of suites) budget.add(suite.records.usage);
  const skipped = suites.flatMap((suite) => [...suite.records]).filter((record) => record.skipReason === 'budget').length;
  return budgetReport(budget, suites, skipped);
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
  const suites = mergeJournals(runDirs).map(mergedSuiteReport);
  const report = finishRun(suites, factsOf(readSummaries(runDirs), suites, config), config);
  writeMergedSummary(config.outputDir, report);
  const reporters = await createReporters(config, terminal);
  for (const suite of report.suites) reporters.onSuiteEnd(suite);
  await reporters.onRunEnd(report);
  return exitOnceWritten(reporters, reporters.verdict(report).exitCode);
}
