import { describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../../src/node/config/resolve-config.ts';
import { parseRowSelection } from '../../src/node/dataset/row-selection.ts';
import { countPlanned, planBatches, planSuite, type SuitePlanInput } from '../../src/node/run/plan-suite.ts';
import type { SuiteSettings } from '../../src/node/run/suite-settings.ts';

/** 600 inline rows (more than one batch), the 300th not a valid row. */
const dataset = Array.from({ length: 600 }, (_, i) => (i === 299 ? { label: 'no prompt' } : { prompt: `row ${i + 1}` }));

function input(runs: number, rows?: string): SuitePlanInput & { seen: { rows: number } } {
  const config = { rows: rows === undefined ? undefined : parseRowSelection(rows), shard: undefined, datasetMaxLineBytes: undefined } as unknown as ResolvedConfig;
  const settings = { runs, timeouts: { agentSec: 5 } } as unknown as SuiteSettings;
  return { file: '/x/s.rollout.ts', suite: { name: 's', dataset, workflow: 'w.ts:W' }, settings, config, idPrefix: 's-1', seen: { rows: 0 } };
}

async function plannedIds(from: AsyncIterable<{ key: { id: string } }>): Promise<string[]> {
  const ids: string[] = [];
  for await (const planned of from) ids.push(planned.key.id);
  return ids;
}

describe('planning inline rows in batches', () => {
  it('plans every row and run in order, a broken row once, as one rollout at a time did', async () => {
    const plan = input(2);
    const ids = await plannedIds(planSuite(plan));
    const expected = dataset.flatMap((_, i) => (i === 299 ? ['s-1.r300.n1'] : [`s-1.r${i + 1}.n1`, `s-1.r${i + 1}.n2`]));
    expect(ids).toEqual(expected);
    expect(plan.seen.rows).toBe(600);
    expect(await countPlanned(input(2))).toEqual({ rows: 600, rollouts: 1199 });
    expect(await countPlanned(input(1))).toEqual({ rows: 600, rollouts: 600 });
  });

  it('hands rollouts out in batches, not one per step, with their requests', async () => {
    const sizes: number[] = [];
    let first: unknown;
    for await (const batch of planBatches(input(1))) {
      sizes.push(batch.length);
      first ??= batch[0];
    }
    expect(sizes).toEqual([256, 256, 88]);
    expect(first).toEqual({
      kind: 'request',
      key: { id: 's-1.r1.n1', suite: 's', file: '/x/s.rollout.ts', row: 1, rowId: undefined, where: 'inline row 1', run: 1 },
      request: { id: 's-1.r1.n1', prompt: [{ role: 'user', content: 'row 1' }], label: null, metadata: null, agentTimeoutSec: 5, graderTimeoutSec: null },
    });
  });

  it('plans only the rows --rows selects, and counts every row it read', async () => {
    const plan = input(1, '2,299-301,600');
    expect(await plannedIds(planSuite(plan))).toEqual(['s-1.r2.n1', 's-1.r299.n1', 's-1.r300.n1', 's-1.r301.n1', 's-1.r600.n1']);
    expect(plan.seen.rows).toBe(600);
    expect(await countPlanned(input(1, '2,299-301,600'))).toEqual({ rows: 5, rollouts: 5 });
    expect(await countPlanned(input(2, '2,299-301,600'))).toEqual({ rows: 5, rollouts: 9 });
  });
});
