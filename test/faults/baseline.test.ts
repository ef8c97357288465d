import { describe, expect, test } from 'vitest';
import { makeProject, runCli } from '../helpers/project.ts';
import { markedRollout, ranAny } from './fixtures.ts';

describe('--baseline', () => {
  test('a baseline that does not exist is a usage error before any rollout runs', async () => {
    const dir = makeProject({ 'rows.rollout.ts': markedRollout(3) });
    const run = await runCli(dir, ['run', '--baseline', 'missing.json']);
    expect(run.exitCode, String(run.all)).toBe(2);
    expect(run.stderr).toMatch(/cannot read the baseline .*missing\.json: ENOENT/);
    expect(ranAny(dir)).toBe(false);
  });

  test('--fail-on-regression without --baseline is a usage error before any rollout runs', async () => {
    const dir = makeProject({ 'rows.rollout.ts': markedRollout(3) });
    const run = await runCli(dir, ['run', '--fail-on-regression']);
    expect(run.exitCode, String(run.all)).toBe(2);
    expect(run.stderr).toMatch(/--fail-on-regression needs a baseline to compare with: add --baseline previous \(the run before this one\)/);
    expect(ranAny(dir)).toBe(false);
  });
});
