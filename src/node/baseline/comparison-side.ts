import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { UsageError } from '../errors.ts';
import { readJournal } from '../output/journal-reader.ts';
import { findRun, latestRun, listRuns, runsDir } from '../output/run-history.ts';
import { outcomesOf, type RolloutOutcome, type RowTable, rowResults } from '../stats/index.ts';
import { type ComparisonSide, latestBaselinePath, readBaseline, type SideSuite } from './baseline-store.ts';

/** A rollout id is `<suite key>.r<row>.n<run>`; the key says which suite it belongs to. */
export const suiteKeyOfRollout = (id: string) => /^(.*)\.r\d+\.n\d+$/.exec(id)?.[1] ?? id;

/** When a run started: its summary says; a run killed before it wrote one is dated by its folder's name. */
function startedAt(runDir: string): string {
  try {
    return String(JSON.parse(readFileSync(path.join(runDir, 'summary.json'), 'utf8')).startedAt);
  } catch {
    const [, date, time] = /^(\d{4}\d{2}\d{2})T(\d{6}(?:\.\d{3})?)Z/.exec(path.basename(runDir)) ?? [];
    return date && time ? `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6)}T${time.slice(0, 2)}:${time.slice(2, 4)}:${time.slice(4)}Z` : '';
  }
}

/** What a side keeps of each rollout of a stored run: its suite and its outcome, not its details, logs or timings. */
interface KeptRollout {
  suite: string;
  outcome: RolloutOutcome;
}

/** A stored run as a side of a comparison: each suite's rows from the run's journal, passes by the suite's threshold. */
export function runSide(runDir: string): ComparisonSide {
  const journal = readJournal(runDir, (record): KeptRollout => ({ suite: record.suite, outcome: outcomesOf([record])[0]! }));
  const bySuite = new Map<string, KeptRollout[]>();
  for (const [id, kept] of journal.rollouts) {
    const key = suiteKeyOfRollout(id);
    const rollouts = bySuite.get(key);
    if (rollouts) rollouts.push(kept);
    else bySuite.set(key, [kept]);
  }
  // In the order of the run's report (its suite lines, written at its end), not the order rollouts finished in, which
  // differs from run to run as suites run side by side; a run killed before its end, by key.
  const order = [...journal.suites.keys(), ...[...bySuite.keys()].sort()];
  const sorted = [...bySuite].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b));
  const suites = sorted.map(([key, rollouts]): [string, SideSuite] => {
    const outcomes = rollouts.map((r) => r.outcome);
    const rows: RowTable = new Map(Object.entries(rowResults(outcomes, journal.suites.get(key)?.passThreshold ?? 1)));
    return [key, { name: rollouts[0]!.suite, rows }];
  });
  return { source: { kind: 'run', path: runDir, run: path.basename(runDir), time: startedAt(runDir) }, suites: new Map(suites) };
}

const HISTORY = /^(?:latest(?:~(\d+))?|previous)$/;

/** `latest`, `latest~N` (N runs before it) or `previous` (`latest~1`): a run of the history, or undefined. */
function historyRun(reference: string, outputDir: string): string | undefined {
  const match = HISTORY.exec(reference);
  if (!match) return undefined;
  const back = reference === 'previous' ? 1 : Number(match[1] ?? 0);
  const runs = listRuns(outputDir);
  const run = runs[runs.length - 1 - back];
  if (!run) throw new UsageError(`no run ${reference} in ${runsDir(outputDir)}: it holds ${runs.length} run${runs.length === 1 ? '' : 's'}`);
  return run;
}

/**
 * One side of `rollout-test compare`: a run of the history (`latest`, `latest~N`, `previous`, a run id or a run
 * folder) or a stored baseline file.
 */
export function resolveSide(reference: string, config: Pick<ResolvedConfig, 'outputDir' | 'root'>): ComparisonSide {
  const run = historyRun(reference, config.outputDir) ?? findRun(config.outputDir, config.root, reference);
  if (run) return runSide(run);
  const file = path.resolve(config.root, reference);
  if (reference.endsWith('.json') || (existsSync(file) && statSync(file).isFile())) return readBaseline(file);
  throw new UsageError(`no run or baseline file "${reference}": give a run id, a run folder, latest, latest~N, previous or a baseline file`);
}

/**
 * The side `--baseline` names. `previous` is the newest run of the history before this one (`currentRun`);
 * `latest` the newest stored baseline, the file `--save-baseline` writes; anything else as for `compare`.
 */
export function loadBaseline(value: string, config: ResolvedConfig, currentRun: string | undefined): ComparisonSide {
  if (value === 'previous') {
    const previous = latestRun(config.outputDir, currentRun);
    if (!previous) throw new UsageError(`--baseline previous: no earlier run in ${runsDir(config.outputDir)}`);
    return runSide(previous);
  }
  if (value === 'latest') {
    const file = latestBaselinePath(config.outputDir);
    if (!existsSync(file)) {
      throw new UsageError(
        `--baseline latest is the newest baseline saved with --save-baseline (${file}), and none is saved: save one with --save-baseline, or compare with the run before this one with --baseline previous`,
      );
    }
    return readBaseline(file);
  }
  return resolveSide(value, config);
}
