import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { coinSampler, fixedInterval, fixedRunsFor, SIXTY_PERCENT_DETERMINISTIC, simulateAdaptive } from './helpers/adaptive-simulation.ts';
import { makeProject, REPO, runCli } from './helpers/project.ts';
import { startRedis, startWorker } from './helpers/redis.ts';

/** A suite whose row i passes run r when uniform(seed, i, r) < p_i: the same rollout always gets the same reward. */
const COINS = `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
const probabilities = JSON.parse(process.env.COIN_PROBABILITIES);
const seed = Number(process.env.COIN_SEED);
const graded = process.env.COIN_SCALE !== undefined;
function uniform(row, run) {
  let h = (seed * 0x9e3779b1 + row * 0x85ebca6b + run * 0xc2b2ae35) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0;
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}
export class Say extends AgentWorkflow {
  run(ctx) { return [...ctx.prompt, { role: 'assistant', content: 'ok' }]; }
}
export class Coin extends Grader {
  grade(ctx) {
    const [, row, run] = /\\.r(\\d+)\\.n(\\d+)$/.exec(ctx.rolloutId);
    const reward = uniform(Number(row), Number(run)) < ctx.metadata.p ? 1 : 0;
    return graded ? reward * Number(process.env.COIN_SCALE) : reward;
  }
}
defineRollout({
  name: 'coins',
  dataset: probabilities.map((p, i) => ({ id: 'row-' + (i + 1), prompt: 'flip', metadata: { p } })),
  workflow: Say,
  grader: Coin,
  n: 2,
});
`;

const PROBABILITIES = [1, 0, 1, 0, 1, 0, 0.5, 0.3, 0.8, 0.6];

const COIN_ENV = { COIN_PROBABILITIES: JSON.stringify(PROBABILITIES), COIN_SEED: '3' };

/** The coins as Harbor trials (process environment) of one task without tests: the suite's Grader runs inside each trial. */
const harborProject = (coins: string) =>
  makeProject({
    'coins.rollout.js': coins.replace('  n: 2,', "  n: 2,\n  backend: { type: 'harbor', taskDir: './task', environment: 'process' },"),
    'task/task.toml': 'version = "1.0"\n',
    'task/instruction.md': 'Flip.\n',
  });

async function run(args: string[], env: Record<string, string> = {}, dir = makeProject({ 'coins.rollout.js': COINS })) {
  const result = await runCli(dir, [...args, '--reporter', 'default', '--reporter', 'json', '--outputFile.json', 'report.json'], { env: { ...COIN_ENV, ...env } });
  const report = result.exitCode === 2 ? undefined : JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
  return { result, suite: report?.suites[0] };
}

describe('--target-width through the CLI', () => {
  it('stops once the interval is at most the target wide, and matches the simulated loop rollout for rollout', async () => {
    const { result, suite } = await run(['--target-width', '0.3', '--max-runs', '60']);
    const { meanReward, adaptive } = suite.stats;
    const simulated = simulateAdaptive(PROBABILITIES.length, coinSampler(PROBABILITIES, 3), { targetWidth: 0.3, maxRuns: 60, initialRuns: 2 });
    console.log(`CLI: width ${(meanReward.high - meanReward.low).toFixed(3)} with ${adaptive.rollouts} rollouts; simulated: ${simulated.adaptive.rollouts}`);
    expect(adaptive).toEqual({ targetWidth: 0.3, reached: true, rollouts: simulated.adaptive.rollouts });
    expect(meanReward.high - meanReward.low).toBeLessThanOrEqual(0.3);
    expect(meanReward).toMatchObject({ method: 'confidence-sequence-stratified', mean: simulated.mean, population: { method: 'wilson-clustered' } });
    expect(meanReward.low).toBeCloseTo(simulated.low, 12);
    expect(meanReward.high).toBeCloseTo(simulated.high, 12);
    expect(suite.stats.counts.total).toBe(adaptive.rollouts);
    expect(adaptive.rollouts).toBeGreaterThan(2 * PROBABILITIES.length);
    expect(result.all).toMatch(/Adaptive {2}coins: width 0\.\d{3}, target 0\.300 reached · \d+ rollouts/);
  });

  it('with 60% of the rows deterministic, runs at most 60% of the rollouts of the plain suite (-n m) that is as narrow', async () => {
    const dir = makeProject({ 'coins.rollout.js': COINS });
    const probabilities = SIXTY_PERCENT_DETERMINISTIC;
    const coins = (seed: number) => ({ COIN_PROBABILITIES: JSON.stringify(probabilities), COIN_SEED: String(seed) });
    // The plain suite: the fewest runs per row at which rollout-test's own interval is at most 0.05 wide (79 for each
    // of these seeds: Wilson's interval on 0/1 rewards depends on the share of passes only).
    const runs = fixedRunsFor(probabilities.length, coinSampler(probabilities, 1), 0.05);
    const plain = (await run(['-n', String(runs)], coins(1), dir)).suite.stats.meanReward;
    const fewer = fixedInterval(probabilities.length, coinSampler(probabilities, 1), runs - 1);
    expect(plain.low).toBeCloseTo(fixedInterval(probabilities.length, coinSampler(probabilities, 1), runs).low!, 12);
    expect(plain.high - plain.low).toBeLessThanOrEqual(0.05);
    expect(fewer.high! - fewer.low!).toBeGreaterThan(0.05);
    let share = 0;
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const { suite } = await run(['--target-width', '0.05', '--max-runs', '400'], coins(seed), dir);
      expect(suite.stats.adaptive.reached).toBe(true);
      expect(suite.stats.meanReward.high - suite.stats.meanReward.low).toBeLessThanOrEqual(0.05);
      share += suite.stats.adaptive.rollouts / (runs * probabilities.length) / 6;
    }
    console.log(`--target-width 0.05 ran ${(100 * share).toFixed(1)}% of the rollouts of -n ${runs} (mean over 6 seeds)`);
    expect(share).toBeLessThanOrEqual(0.6);
  }, 300_000);

  it('runs its rounds on the workers of a queue, with the same result as a local run', async () => {
    const redis = await startRedis();
    const dir = makeProject({ 'coins.rollout.js': COINS });
    const worker = startWorker(dir, redis.url, ['--concurrency', '4'], { env: COIN_ENV });
    try {
      await worker.waitFor(/serving runs of/);
      const { result, suite } = await run(['--target-width', '0.3', '--max-runs', '60', '--queue', redis.url], {}, dir);
      const simulated = simulateAdaptive(PROBABILITIES.length, coinSampler(PROBABILITIES, 3), { targetWidth: 0.3, maxRuns: 60, initialRuns: 2 });
      expect(result.exitCode, String(result.all)).not.toBe(2);
      expect(suite.stats.counts.errored, String(result.all)).toBe(0);
      expect(suite.stats.adaptive).toEqual({ targetWidth: 0.3, reached: true, rollouts: simulated.adaptive.rollouts });
      expect(suite.stats.meanReward.low).toBeCloseTo(simulated.low, 12);
    } finally {
      worker.process.kill('SIGTERM');
      await worker.process;
      await redis.stop();
    }
  });

  it('runs its rounds as Harbor trials (process environment), with the same result as a local run', async () => {
    // A trial does not inherit the CLI's environment: the coins are written into the file.
    const coins = COINS.replace('JSON.parse(process.env.COIN_PROBABILITIES)', JSON.stringify(PROBABILITIES)).replace('Number(process.env.COIN_SEED)', COIN_ENV.COIN_SEED);
    const dir = harborProject(coins);
    const { result, suite } = await run(['--target-width', '0.3', '--max-runs', '60'], {}, dir);
    const simulated = simulateAdaptive(PROBABILITIES.length, coinSampler(PROBABILITIES, 3), { targetWidth: 0.3, maxRuns: 60, initialRuns: 2 });
    expect(suite?.stats.counts.errored, String(result.all)).toBe(0);
    expect(suite.stats.adaptive).toEqual({ targetWidth: 0.3, reached: true, rollouts: simulated.adaptive.rollouts });
    expect(suite.stats.meanReward.low).toBeCloseTo(simulated.low, 12);
    expect(suite.stats.meanReward.high).toBeCloseTo(simulated.high, 12);
    expect(suite.records.every((record: { trialDir?: string }) => typeof record.trialDir === 'string')).toBe(true);
  }, 240_000);

  it('is shown by the JUnit, GitHub job summary and HTML reports', async () => {
    const dir = makeProject({ 'coins.rollout.js': COINS });
    const summaryFile = path.join(dir, 'step-summary.md');
    const args = ['--target-width', '0.3', '--max-runs', '60', '--reporter', 'junit', '--outputFile.junit', 'junit.xml', '--reporter', 'github-actions', '--reporter', 'html', '--outputFile.html', 'html/index.html'];
    const { suite } = await run(args, { GITHUB_STEP_SUMMARY: summaryFile }, dir);
    const { rollouts } = suite.stats.adaptive;
    const junit = readFileSync(path.join(dir, 'junit.xml'), 'utf8');
    expect(junit).toContain('<property name="adaptive.targetWidth" value="0.3"/><property name="adaptive.reached" value="true"/>');
    expect(junit).toContain(`<property name="adaptive.rollouts" value="${rollouts}"/>`);
    expect(junit).toContain('<property name="meanReward.method" value="confidence-sequence-stratified"/>');
    expect(readFileSync(summaryFile, 'utf8')).toMatch(new RegExp(`- coins: adaptive: width 0\\.\\d{3}, target 0\\.300 reached · ${rollouts} rollouts`));
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      await page.goto(`file://${path.join(dir, 'html', 'index.html')}`);
      const width = (suite.stats.meanReward.high - suite.stats.meanReward.low).toFixed(3);
      expect(await page.locator('.card .adaptive').textContent()).toBe(`adaptive: width ${width}, target 0.300 reached · ${rollouts} rollouts`);
    } finally {
      await browser.close();
    }
  });

  it('keeps its interval and stats.adaptive through merge-reports of the output directory that holds it', async () => {
    const dir = makeProject({ 'coins.rollout.js': COINS });
    const { suite } = await run(['--target-width', '0.3', '--max-runs', '60', '--outputDir', 'out'], {}, dir);
    const merged = await runCli(dir, ['merge-reports', 'out', '--outputDir', 'merged', '--reporter', 'json', '--outputFile.json', 'merged.json'], { env: COIN_ENV });
    expect(merged.exitCode, String(merged.all)).not.toBe(2);
    const [mergedSuite] = JSON.parse(readFileSync(path.join(dir, 'merged.json'), 'utf8')).suites;
    expect(mergedSuite.stats.adaptive).toEqual(suite.stats.adaptive);
    expect(mergedSuite.stats.meanReward).toEqual(suite.stats.meanReward);
  });

  it('stops at --max-runs: reached is false and every row has its cap', async () => {
    const { suite } = await run(['--target-width', '0.05', '--max-runs', '4']);
    expect(suite.stats.adaptive).toEqual({ targetWidth: 0.05, reached: false, rollouts: 4 * PROBABILITIES.length });
    expect(suite.stats.counts.total).toBe(4 * PROBABILITIES.length);
  });

  it('adds no runs to a suite whose rewards are outside [0, 1], and says why', async () => {
    const { result, suite } = await run(['--target-width', '0.3', '--max-runs', '60'], { COIN_SCALE: '5' });
    expect(suite.stats.adaptive).toMatchObject({ reached: false, rollouts: 2 * PROBABILITIES.length });
    expect(suite.stats.adaptive.stopped).toMatch(/a reward in \[0, 1\] is needed, got 5 \(--target-width needs rewards in \[0, 1\]\)/);
    expect(suite.stats.counts.total).toBe(2 * PROBABILITIES.length);
    expect(result.all).toContain('--target-width needs rewards in [0, 1]');
  });

  it('adds no runs after a round in which no rollout had a reward, and says why', async () => {
    // Without the CLI's environment every trial fails to load the file: an infrastructure error, with no reward.
    const { suite } = await run(['--target-width', '0.3', '--max-runs', '60'], {}, harborProject(COINS));
    expect(suite.stats.counts).toMatchObject({ total: 2 * PROBABILITIES.length, infrastructure: 2 * PROBABILITIES.length });
    expect(suite.stats.adaptive).toEqual({ targetWidth: 0.3, reached: false, rollouts: 2 * PROBABILITIES.length, stopped: 'no further runs: no rollout of the last round had a reward' });
  });

  it('starts no further round once the budget is reached: the rollouts that ran are counted, the suite is partial', async () => {
    // The calculator example on the scripted model server spends about 110 tokens a rollout; its rows always pass.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-adaptive-budget-'));
    const args = ['run', 'calculator-agent', '-t', '^calculator agent$', '-n', '2', '--max-concurrency', '2', '--target-width', '0.3', '--max-runs', '20'];
    const file = (name: string) => path.join(dir, name);
    const reporters = ['verbose', 'json', 'junit', 'github-actions', 'html'].flatMap((name) => ['--reporter', name]);
    const outputs = ['--outputFile.json', file('r.json'), '--outputFile.junit', file('r.xml'), '--outputFile.html', file('html/index.html')];
    const result = await runCli(REPO, [...args, '--max-tokens', '1500', '--outputDir', file('out'), ...reporters, ...outputs], { env: { GITHUB_STEP_SUMMARY: file('summary.md') } });
    const report = JSON.parse(readFileSync(file('r.json'), 'utf8'));
    const [suite] = report.suites;
    const { counts, adaptive } = suite.stats;
    // Whether the cap falls inside a round (its unstarted rollouts skipped) or at its end, no further round starts.
    expect(report, String(result.all)).toMatchObject({ partial: true, budget: { ran: counts.total - counts.skipped } });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain('stopped at the budget: ');
    expect(adaptive).toEqual({ targetWidth: 0.3, reached: false, rollouts: counts.total - counts.skipped, stopped: 'no further runs: the budget was reached' });
    // Only the round in flight when the cap was reached has skipped rollouts; rounds go on to the cap without the stop.
    expect(counts.skipped).toBeLessThan(counts.total - counts.skipped);
    expect(suite.stats.meanReward.method).toBe('confidence-sequence-stratified');
    // Every reporter says why the suite stopped, and that it is partial.
    const stop = `target width 0.300 not reached, no further runs: the budget was reached · ${adaptive.rollouts} rollouts`;
    expect(result.stdout).toContain(`Adaptive  calculator agent: ${stop}`);
    expect(result.stdout).toContain('partial: the budget stopped it after');
    const junit = readFileSync(file('r.xml'), 'utf8');
    expect(junit).toContain('<property name="adaptive.reached" value="false"/>');
    expect(junit).toContain('<property name="adaptive.stopped" value="no further runs: the budget was reached"/>');
    expect(junit).toContain('<property name="partial" value="true"/>');
    const summary = readFileSync(file('summary.md'), 'utf8');
    expect(summary).toContain(`- calculator agent: adaptive: ${stop}`);
    expect(summary).toContain('(partial: stopped at the budget)');
    const html = readFileSync(file('html/index.html'), 'utf8');
    expect(html).toContain(`adaptive: ${stop}`);
    expect(html).toContain('"partial":true');
  });

  it('needs --max-runs, and is refused with --shard', async () => {
    const missing = await run(['--target-width', '0.3']);
    expect(missing.result.exitCode).toBe(2);
    expect(missing.result.all).toContain('--target-width (targetWidth) needs --max-runs (maxRuns)');
    const sharded = await run(['--target-width', '0.3', '--max-runs', '5', '--shard', '1/2']);
    expect(sharded.result.exitCode).toBe(2);
    expect(sharded.result.all).toContain('--target-width cannot be used with --shard');
  });
});
