import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { UsageError } from '../errors.ts';
import type { ComparisonSource, SuiteReport } from '../types/run-report.ts';
import { type RowResult, type RowTable, rowResults } from '../stats/index.ts';

const RowsSchema = z.record(z.string(), z.object({ rewards: z.array(z.number()).min(1), passes: z.number().int().nonnegative() }));

/** Version 2: each suite's rows with their runs' rewards and passes (what a paired test and `flipped` need). */
const BaselineSchema = z.object({
  version: z.literal(2),
  savedAt: z.string(),
  /** The run it was saved from. */
  run: z.string().optional(),
  suites: z.record(z.string(), z.object({ name: z.string(), passThreshold: z.number(), rows: RowsSchema })),
});

/** Version 1 kept only each row's mean reward: still read, as rows of one run whose passes are unknown. */
const BaselineV1Schema = z.object({
  version: z.literal(1),
  savedAt: z.string(),
  suites: z.record(z.string(), z.object({ name: z.string(), rowMeans: z.record(z.string(), z.number()) })),
});

type Baseline = z.infer<typeof BaselineSchema>;

/** One suite of a side of a comparison: its name and its rows by row key. */
export interface SideSuite {
  name: string;
  rows: RowTable;
}

/** One side of a comparison: where it came from and its suites by key. */
export interface ComparisonSide {
  source: ComparisonSource;
  suites: ReadonlyMap<string, SideSuite>;
}

/** Where `--save-baseline` (without a path) and `--baseline latest` keep the newest stored baseline. */
export const latestBaselinePath = (outputDir: string) => path.join(outputDir, 'baselines', 'latest.json');

export function baselinePath(value: string | true, outputDir: string, root: string): string {
  return value === true || value === 'latest' ? latestBaselinePath(outputDir) : path.resolve(root, value);
}

const v1Rows = (rowMeans: Record<string, number>): RowTable =>
  new Map(Object.entries(rowMeans).map(([key, mean]): [string, RowResult] => [key, { rewards: [mean], passes: null }]));

/** A stored baseline file as a side of a comparison. */
export function readBaseline(file: string): ComparisonSide {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read the baseline ${file}: ${(error as Error).message} (save one with --save-baseline)`);
  }
  const checked = z.union([BaselineSchema, BaselineV1Schema]).safeParse(parsed);
  if (!checked.success) throw new UsageError(`${file} is not a rollout-test baseline:\n${z.prettifyError(checked.error)}`);
  const baseline = checked.data;
  const suites = Object.entries(baseline.suites).map(([key, suite]): [string, SideSuite] => [
    key,
    { name: suite.name, rows: 'rows' in suite ? new Map(Object.entries(suite.rows)) : v1Rows(suite.rowMeans) },
  ]);
  const run = 'run' in baseline ? baseline.run : undefined;
  return { source: { kind: 'baseline-file', path: file, run, time: baseline.savedAt }, suites: new Map(suites) };
}

/** Stores each suite's rows (rewards and passes of every run): what a later `--baseline` or `compare` pairs with. */
export function saveBaseline(file: string, suites: SuiteReport[], runDir: string | undefined): void {
  const baseline: Baseline = {
    version: 2,
    savedAt: new Date().toISOString(),
    run: runDir && path.basename(runDir),
    suites: Object.fromEntries(
      suites.filter((s) => !s.error).map((s) => [s.key, { name: s.name, passThreshold: s.passThreshold, rows: rowResults(s.records.outcomes(), s.passThreshold) }]),
    ),
  };
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(baseline, null, 2)}\n`);
}
