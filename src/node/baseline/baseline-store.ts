import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UsageError } from '../cli/usage-error.ts';
import type { SuiteReport } from '../run/run-report.ts';
import { rowMeanRewards } from '../stats/index.ts';
import { outcomesOf } from '../run/suite-report.ts';

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
    suites: Object.fromEntries(suites.filter((s) => !s.error).map((s) => [s.key, { name: s.name, rowMeans: rowMeanRewards(outcomesOf(s.records)) }])),
  };
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(baseline, null, 2)}\n`);
}
