/** Token usage summed per suite and run, priced by the config's table, in the summary, JSON and JUnit. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { costOf } from '../src/node/cost/prices.ts';
import { sumUsage, usageOfSamples } from '../src/node/cost/usage.ts';
import { REPO, runCli } from './helpers/project.ts';

const sample = (model: string | undefined, prompt: number, completion: number, cached = 0) => ({
  source: 'test',
  messages: [],
  metrics: { prompt_tokens: prompt, completion_tokens: completion, cached_tokens: cached },
  extraFields: model ? { model } : ({} as Record<string, string>),
});

describe('usage and cost', () => {
  it('sums the samples by model and prices cached prompt tokens at their own price', () => {
    const usage = usageOfSamples([sample('m', 1000, 100, 400), sample('m', 1000, 100), sample(undefined, 5, 5)]);
    expect(usage).toEqual({ m: { prompt: 2000, completion: 200, cached: 400 }, unknown: { prompt: 5, completion: 5, cached: 0 } });
    const cost = costOf(usage, { m: { prompt: 2, completion: 8, cached: 0.5 } });
    expect(cost?.total).toBeCloseTo((1600 * 2 + 400 * 0.5 + 200 * 8) / 1e6, 12);
    expect(cost?.unpriced).toEqual(['unknown']);
    expect(sumUsage([usage, undefined, { m: { prompt: 1, completion: 1, cached: 1 } }])?.m).toEqual({ prompt: 2001, completion: 201, cached: 401 });
    expect(usageOfSamples([sample('m', 0, 0)])).toBeUndefined();
    expect(costOf(usage, undefined)).toBeUndefined();
  });
});

describe('a run of the calculator example with a price table', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-cost-'));
  writeFileSync(path.join(dir, 'prices.mjs'), "export default { prices: { scripted: { prompt: 2, completion: 8 } } };\n");
  const run = await runCli(REPO, [
    'run', 'calculator-agent', '-t', '^calculator agent$', '--config', path.join(dir, 'prices.mjs'), '--outputDir', path.join(dir, 'out'),
    '--reporter', 'default', '--reporter', 'json', '--reporter', 'junit', '--outputFile.json', path.join(dir, 'r.json'), '--outputFile.junit', path.join(dir, 'r.xml'),
  ]);
  const report = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8'));

  it('sums every rollout\'s tokens per suite and run, and prices them', () => {
    expect(run.exitCode, String(run.all)).toBe(0);
    const [suite] = report.suites;
    const perRollout = suite.records.map((r: { usage: { scripted: { prompt: number } } }) => r.usage.scripted.prompt);
    expect(perRollout.every((n: number) => n > 0)).toBe(true);
    expect(suite.usage.scripted.prompt).toBe(perRollout.reduce((a: number, b: number) => a + b, 0));
    const { prompt, completion } = report.usage.scripted;
    expect(report.cost.total).toBeCloseTo((prompt * 2 + completion * 8) / 1e6, 12);
    expect(suite.cost).toEqual(report.cost);
    expect(run.stdout).toContain(`Tokens  ${prompt.toLocaleString('en-US')} prompt · ${completion.toLocaleString('en-US')} completion · cost ${report.cost.total.toFixed(4)}`);
  });

  it('puts the totals into the JUnit suite properties', () => {
    const xml = readFileSync(path.join(dir, 'r.xml'), 'utf8');
    expect(xml).toContain(`<property name="tokens.prompt" value="${report.usage.scripted.prompt}"/>`);
    expect(xml).toContain(`<property name="cost" value="${report.cost.total}"/>`);
  });
});
