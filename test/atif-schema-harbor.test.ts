/**
 * Harbor's own pydantic `Trajectory` (read from upstream at test time, see helpers/harbor-trajectory-model.ts) says
 * of each case of test/fixtures/atif-cases.ts what the case says, which test/unit/atif-schema.test.ts checks of ours.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { Trajectory } from '../src/model/atif/index.ts';
import { ACCEPTED, atTimestamp, REFUSED, TIMESTAMPS_ACCEPTED, TIMESTAMPS_REFUSED, variant } from './fixtures/atif-cases.ts';
import { harborValidation } from './helpers/harbor-trajectory-model.ts';

it("agrees with Harbor's own pydantic Trajectory on each case", async (ctx) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atif-cases-'));
  const cases = [
    ...Object.entries(ACCEPTED).map(([name, change]) => ({ name, document: variant(change), accepted: true })),
    ...Object.entries(REFUSED).map(([name, change]) => ({ name, document: variant(change), accepted: false })),
    ...TIMESTAMPS_ACCEPTED.map((timestamp) => ({ name: `timestamp ${JSON.stringify(timestamp)}`, document: atTimestamp(timestamp), accepted: true })),
    ...TIMESTAMPS_REFUSED.map((timestamp) => ({ name: `timestamp ${JSON.stringify(timestamp)}`, document: atTimestamp(timestamp), accepted: false })),
  ];
  const files = cases.map((c: { name: string; document: Trajectory; accepted: boolean }, i) => {
    const file = path.join(dir, `${i}.json`);
    writeFileSync(file, JSON.stringify(c.document));
    return { ...c, file };
  });
  const verdict = await harborValidation(files.map((f) => f.file));
  if (verdict.skipped !== undefined) return ctx.skip(verdict.skipped);
  const refusedByHarbor = files.filter((f) => verdict.failures.some((failure) => failure.startsWith(`${f.file}:`)));
  expect(refusedByHarbor.map((f) => f.name).sort()).toEqual(files.filter((f) => !f.accepted).map((f) => f.name).sort());
  expect(verdict.valid).toBe(files.filter((f) => f.accepted).length);
});
