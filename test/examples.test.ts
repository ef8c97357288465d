import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, runCli } from './helpers/project.ts';

/** README.md and docs/contributing.md promise what `npx rollout-test` prints on a fresh clone; this holds it to that. */
describe('the examples in rollouts/', () => {
  it('run offline and end as the README says', async () => {
    const outputDir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-examples-'));
    const run = await runCli(REPO, ['--reporter', 'json', '--outputDir', outputDir], { env: { ROLLOUT_CHAT_COMPLETIONS_URL: '' } });
    expect(run.exitCode).toBe(1);
    const report = JSON.parse(String(run.stdout));
    const verdicts = Object.fromEntries(
      report.suites.map((s: { name: string; stats: { counts: Record<string, number> } }) => [s.name, s.stats.counts]),
    );
    expect(verdicts).toMatchObject({
      greeting: { total: 6, passed: 6 },
      arithmetic: { total: 24, passed: 16, failed: 8 },
      lookup: { total: 4, passed: 2, errored: 2 },
      'calculator agent': { total: 6, passed: 6 },
      'calculator agent (AI SDK)': { total: 3, passed: 3 },
      'calculator agent (Agents SDK)': { total: 3, passed: 3 },
      'harbor: hello-file': { total: 1, passed: 1 },
      'harbor: word-count': { total: 1, passed: 1 },
      'harbor: hello-file (oracle)': { total: 1, passed: 1 },
    });
    expect(report.overall.errorsByCategory).toEqual({ AGENT_ERROR: 1, VALIDATION_ERROR: 1 });

    // Each SDK's agent is recorded with every model turn of its tool loop (3, 4 and 1 calls for the three rows).
    const samples = readFileSync(path.join(outputDir, 'runs', 'latest', 'samples.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const suite of ['calculator agent', 'calculator agent (AI SDK)', 'calculator agent (Agents SDK)']) {
      const calls = samples
        .filter((s) => s.suite === suite && s.run === 1)
        .sort((a, b) => a.row - b.row)
        .map((s) => [s.samples[0].metrics.model_calls, s.samples[0].trajectoryMessages.length]);
      expect({ suite, calls }).toEqual({ suite, calls: [[3, 3], [4, 4], [1, 1]] });
    }
  });
});
