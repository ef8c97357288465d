import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { UsageError } from '../errors.ts';
import type { SuiteReport } from '../types/run-report.ts';
import { outcomesOf, rowMeanRewards } from '../stats/index.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { readJournal } from '../output/journal-reader.ts';
import { latestRun } from '../output/run-history.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';

/** A stored run to compare with: each suite's mean reward per row. */
const BaselineSchema = z.object({
  version: z.literal(1),
  savedAt: z.string(),
  suites: z.record(z.string(), z.object({ name: z.string(), rowMeans: z.record(z.string(), z.number()) })),
});
export type Baseline = z.infer<typeof BaselineSchema>;

/** `latest` names the baseline that `--save-baseline` keeps in the output dir. */
export function baselinePath(value: string | true, outputDir: string, root: string): string {
  return value === true || value === 'latest' ? path.join(outputDir, 'baselines', 'latest.json') : path.resolve(root, value);
}

export function readBaseline(file: string): Baseline {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read the baseline ${file}: ${(error as Error).message} (save one with --save-baseline)`);
  }
  const checked = BaselineSchema.safeParse(parsed);
  if (!checked.success) throw new UsageError(`${file} is not a rollout-test baseline:\n${z.prettifyError(checked.error)}`);
  return checked.data;
}

/** Stores each suite's per-row mean rewards (what a later `--baseline` compares with). */
export function saveBaseline(file: string, suites: SuiteReport[]): void {
  const baseline: Baseline = {
    version: 1,
    savedAt: new Date().toISOString(),
    suites: Object.fromEntries(suites.filter((s) => !s.error).map((s) => [s.key, { name: s.name, rowMeans: rowMeanRewards(s.records.outcomes()) }])),
  };
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(baseline, null, 2)}\n`);
}

/** A rollout id is `<suite key>.r<row>.n<run>`; the key says which suite it belongs to. */
export const suiteKeyOfRollout = (id: string) => /^(.*)\.r\d+\.n\d+$/.exec(id)?.[1] ?? id;

/** A stored run as a baseline: each suite's per-row mean rewards, from the run's journal. */
function baselineOfRun(runDir: string): Baseline {
  const journal = readJournal(runDir);
  const bySuite = new Map<string, RolloutRecord[]>();
  for (const record of journal.rollouts.values()) {
    const key = suiteKeyOfRollout(record.id);
    bySuite.set(key, [...(bySuite.get(key) ?? []), record]);
  }
  const suites = [...bySuite].map(([key, records]) => [key, { name: records[0]!.suite, rowMeans: rowMeanRewards(outcomesOf(records)) }]);
  return { version: 1, savedAt: path.basename(runDir), suites: Object.fromEntries(suites) };
}

/**
 * The baseline `--baseline` names. `latest` is the newest run of the history before this one (then the baseline
 * `--save-baseline` kept, when there is no earlier run); anything else is a baseline file.
 */
export function loadBaseline(value: string, config: ResolvedConfig, currentRun: string | undefined): Baseline {
  if (value === 'latest') {
    const previous = latestRun(config.outputDir, currentRun);
    const saved = baselinePath('latest', config.outputDir, config.root);
    if (previous) return baselineOfRun(previous);
    if (!existsSync(saved)) throw new UsageError(`--baseline latest: no earlier run in ${config.outputDir}/runs and no saved baseline (save one with --save-baseline)`);
  }
  return readBaseline(baselinePath(value, config.outputDir, config.root));
}
