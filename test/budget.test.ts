/** Budgets: --max-tokens / --max-cost stop starting rollouts at the cap, without biasing what ran. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { totalTokens, type TokenUsage } from '../src/node/cost/usage.ts';
import type { RolloutRecord } from '../src/node/types/rollout-record.ts';
import { REPO, runCli } from './helpers/project.ts';

const CONCURRENCY = 2;
const CAP = 1000;
/** The calculator example on the scripted model server: 3 rows, 5 runs each, every rollout passes. */
const SUITE = ['run', 'calculator-agent', '-t', '^calculator agent$', '-n', '5', '--max-concurrency', String(CONCURRENCY)];

const spent = (usage: TokenUsage | undefined) => {
  const { prompt, completion } = totalTokens(usage);
  return prompt + completion;
};

/** The rollouts of a run's journal, in the order they ended. */
function journal(outputDir: string): RolloutRecord[] {
  const lines = readFileSync(path.join(outputDir, 'runs/latest/journal.jsonl'), 'utf8').split('\n').filter(Boolean);
  return lines.map((line) => JSON.parse(line)).filter((e) => e.type === 'rollout');
}

describe('a run stopped by --max-tokens', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-budget-'));
  const out = path.join(dir, 'out');
  const file = (name: string) => path.join(dir, name);
  // A full run saved as the baseline, then the budgeted run compared with it.
  const full = await runCli(REPO, [...SUITE, '--outputDir', out, '--reporter', 'default', '--save-baseline', file('baseline.json')]);
  const run = await runCli(
    REPO,
    [
      ...SUITE, '--max-tokens', String(CAP), '--outputDir', out, '--baseline', file('baseline.json'), '--fail-on-regression',
      '--reporter', 'default', '--reporter', 'json', '--reporter', 'junit', '--reporter', 'github-actions', '--reporter', 'html',
      '--outputFile.json', file('r.json'), '--outputFile.junit', file('r.xml'), '--outputFile.html', file('r.html'),
    ],
    { env: { GITHUB_STEP_SUMMARY: file('summary.md') } },
  );
  const report = JSON.parse(readFileSync(file('r.json'), 'utf8'));
  const records = journal(out);
  const ran = records.filter((r) => r.status !== 'skipped');
  const skipped = records.filter((r) => r.status === 'skipped');

  it('starts no rollout once the spend reached the cap: only those in flight then go past it', () => {
    expect(full.exitCode, String(full.all)).toBe(0);
    expect(ran.length).toBeGreaterThan(0);
    expect(skipped.length).toBeGreaterThan(0);
    const total = ran.reduce((sum, r) => sum + spent(r.usage), 0);
    expect(total).toBeGreaterThanOrEqual(CAP);
    // When the last rollout started, the spend was below the cap; at most CONCURRENCY rollouts ended after that.
    const beforeLastStart = ran.slice(0, -CONCURRENCY).reduce((sum, r) => sum + spent(r.usage), 0);
    expect(beforeLastStart).toBeLessThan(CAP);
    expect(report.budget).toEqual({ tokens: CAP, spentTokens: total, planned: 15, ran: ran.length });
  });

  it('skips the unstarted rollouts with the reason, and counts only the rollouts that ran', () => {
    expect(skipped.every((r) => r.skipReason === 'budget' && r.reward === null && !r.error)).toBe(true);
    expect(records.length).toBe(15);
    const [suite] = report.suites;
    expect(suite.stats.counts).toMatchObject({ total: 15, passed: ran.length, failed: 0, errored: 0, skipped: skipped.length });
    // Every rollout that ran passed: a skipped one counted as a failure would pull these below 1.
    expect(suite.stats.meanReward.mean).toBe(1);
    expect(suite.stats.passAtK['1']).toBe(1);
    expect(suite.stats.passRate).toBe(1);
  });

  it('marks the run and the suite partial, the baseline comparison inconclusive, and exits 1 saying so', () => {
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(report.partial).toBe(true);
    expect(report.suites[0]).toMatchObject({ partial: true, passed: false });
    expect(report.suites[0].cancelled).toBeUndefined();
    expect(report.suites[0].baseline.verdict).toBe('inconclusive');
    expect(run.stdout).toContain(`Run stopped at the budget: ${ran.length} of 15 rollouts ran`);
    expect(run.stdout).toContain(`Budget  ${report.budget.spentTokens.toLocaleString('en-US')} of 1,000 tokens`);
    expect(run.stdout).toContain(`partial: the budget stopped it after ${ran.length} of 15 rollouts; gate and baseline inconclusive`);
    const summary = JSON.parse(readFileSync(path.join(report.runDir, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ partial: true, budget: report.budget, suites: [{ partial: true }] });
  });

  it('says so in the JUnit, GitHub job summary and HTML reports', () => {
    const xml = readFileSync(file('r.xml'), 'utf8');
    expect(xml).toContain('<property name="partial" value="true"/>');
    expect(xml).toContain('<skipped message="not started: the run reached its budget"/>');
    expect(xml).toContain('type="BudgetReached"');
    const markdown = readFileSync(file('summary.md'), 'utf8');
    expect(markdown).toContain('(partial: stopped at the budget)');
    expect(markdown).toContain(`stopped at the budget: ${ran.length} of 15 rollouts ran`);
    const html = readFileSync(file('r.html'), 'utf8');
    expect(html).toContain('"partial":true');
    expect(html).toContain('stopped at the budget: ');
  });

  it('lets --resume finish the run under a higher cap', async () => {
    const resumed = await runCli(REPO, [...SUITE, '--max-tokens', '1000000', '--outputDir', out, '--resume', '--reporter', 'default']);
    expect(resumed.exitCode, String(resumed.all)).toBe(0);
    expect(resumed.stdout).toContain('Rollouts  15 passed | 0 failed | 0 errored | 0 skipped (15)');
  });
});

describe('--max-cost', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-budget-cost-'));
  const config = (prices: string) => {
    const file = path.join(dir, `c${prices.length}.mjs`);
    writeFileSync(file, `export default { prices: ${prices} };\n`);
    return file;
  };

  it('needs a price table: without one it is a usage error, not an unlimited run', async () => {
    const run = await runCli(REPO, [...SUITE, '--max-cost', '0.01', '--outputDir', path.join(dir, 'none')]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--max-cost (budget.costUsd) needs a prices table');
  });

  it('stops at the cost cap by the price table, and at once when a model used has no price', async () => {
    const priced = await runCli(REPO, [...SUITE, '--max-cost', '0.004', '--config', config('{ scripted: { prompt: 2, completion: 8 } }'), '--outputDir', path.join(dir, 'priced')]);
    expect(priced.exitCode, String(priced.all)).toBe(1);
    expect(priced.stdout).toMatch(/Budget {2}[\d,]+ tokens · cost 0\.00\d\d of 0\.0040/);
    expect(priced.stdout).toMatch(/stopped at the budget: \d+ of 15 rollouts ran/);
    const unpriced = await runCli(REPO, [...SUITE, '--max-cost', '5', '--config', config('{ other: { prompt: 2, completion: 8 } }'), '--outputDir', path.join(dir, 'unpriced')]);
    expect(unpriced.exitCode, String(unpriced.all)).toBe(1);
    expect(unpriced.stdout).toContain('no price for scripted: its cost cannot be counted, so no further rollout started');
    expect(unpriced.stdout).toContain(`stopped at the budget: ${CONCURRENCY} of 15 rollouts ran`);
  });
});

describe('merge-reports of shards the budget stopped', () => {
  it('keeps the suite partial whichever shard was cut short, the skipped rollouts, and the spend against the caps', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-budget-shards-'));
    // 3 rows of 4 runs over 2 shards (8 and 4 rollouts), 300 tokens each: the first shard is cut short, the second is not.
    const shard = (i: number) => [...SUITE.slice(0, 4), '-n', '4', '--max-concurrency', '1', '--shard', `${i}/2`, '--max-tokens', '300', '--outputDir', path.join(dir, `shard-${i}`)];
    const shards = [await runCli(REPO, shard(1)), await runCli(REPO, shard(2))];
    expect(shards.map((s) => s.exitCode), String(shards[0]?.all)).toEqual([1, 0]);
    const spent = [1, 2].map((i) => JSON.parse(readFileSync(path.join(dir, `shard-${i}/runs/latest/summary.json`), 'utf8')).budget.spentTokens);
    // The shard that was not cut short first: its suite entry is the one a merge met first.
    const merge = await runCli(dir, ['merge-reports', 'shard-2', 'shard-1', '--outputDir', 'merged', '--reporter', 'default', '--reporter', 'json', '--outputFile.json', 'merged.json']);
    const report = JSON.parse(readFileSync(path.join(dir, 'merged.json'), 'utf8'));
    const [suite] = report.suites;
    const skipped = suite.records.filter((r: RolloutRecord) => r.skipReason === 'budget').length;
    expect(merge.exitCode, String(merge.all)).toBe(1);
    expect(skipped).toBeGreaterThan(0);
    expect(suite).toMatchObject({ partial: true, passed: false, stats: { counts: { total: 12, skipped } } });
    expect(report).toMatchObject({ partial: true, budget: { tokens: 600, spentTokens: spent[0] + spent[1], planned: 12, ran: 12 - skipped } });
    expect(merge.stdout).toContain(`Budget  ${(spent[0] + spent[1]).toLocaleString('en-US')} of 600 tokens`);
    expect(merge.stdout).toContain(`stopped at the budget: ${12 - skipped} of 12 rollouts ran`);
  }, 180_000); // three runs of the CLI, one after the other
});
