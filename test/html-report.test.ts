/**
 * The HTML report of a real run of the examples, opened from file:// in Debian's chromium (driven by
 * playwright-core; no browser download): the numbers shown match the JSON report, filters and transcripts work.
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runCli } from './helpers/project.ts';
import { openReportPage } from './helpers/report-page.ts';

const out = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-html-'));
const num = (v: number | null) => (v === null ? '–' : v.toFixed(3));

describe('the HTML report in a real browser', async () => {
  const run = await runCli(REPO, [
    'run', 'greeting', 'arithmetic', 'lookup', 'calculator-agent', '--outputDir', path.join(out, 'runs-dir'),
    '--reporter', 'html', '--reporter', 'json', '--outputFile.json', path.join(out, 'report.json'), '--outputFile.html', path.join(out, 'html', 'index.html'),
  ]);
  const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
  let browser: Browser;
  let page: Page;
  let errors: string[] = [];

  beforeAll(async () => {
    ({ browser, page, errors } = await openReportPage(path.join(out, 'html', 'index.html')));
  }, 60_000);
  afterAll(() => browser?.close());

  const expectedMeans = () => report.suites.map((s: any) => `mean reward ${num(s.stats.meanReward.mean)} [${num(s.stats.meanReward.low)}, ${num(s.stats.meanReward.high)}] (95%, these rows: `);
  /** The cards' mean reward lines up to the method's name. */
  const shownMeans = async (p: Page) => (await p.locator('.card .mean').allTextContents()).map((t) => t.slice(0, t.indexOf('these rows: ') + 'these rows: '.length));

  it('shows each suite\'s mean reward and interval as the JSON report has them', async () => {
    expect(run.exitCode).toBe(1);
    expect(String(run.stdout)).toContain(`HTML report: ${path.join(out, 'html', 'index.html')}`);
    expect(await shownMeans(page)).toEqual(expectedMeans());
    expect(await page.locator('#count').textContent()).toBe(`${report.overall.counts.total} of ${report.overall.counts.total} rollouts`);
    expect(await page.locator('.card .errors').allTextContents()).toContain('errors: AGENT_ERROR 1, VALIDATION_ERROR 1');
    expect(await page.locator('.card canvas').count()).toBeGreaterThan(0);
    const variances = await page.locator('.card .variance').allTextContents();
    expect(variances.length).toBe(report.suites.filter((s: any) => s.stats.variance).length);
    expect(variances.length).toBeGreaterThan(0);
    for (const text of variances) expect(text).toMatch(/^variance: between rows \d\.\d{4} · within rows \d\.\d{4} · ICC /);
    expect(errors).toEqual([]);
  });

  it('never shows a zero-width interval for a suite whose rollouts all passed, and shows rows like these', async () => {
    const allPassed = report.suites.findIndex((s: any) => s.stats.counts.total > 0 && s.stats.counts.passed === s.stats.counts.total);
    expect(allPassed).toBeGreaterThanOrEqual(0);
    const card = page.locator('.card').nth(allPassed);
    const { low, population } = report.suites[allPassed].stats.meanReward;
    expect(low).toBeLessThan(1);
    expect(await card.locator('.mean').textContent()).toMatch(/^mean reward 1\.000 \[0\.\d{3}, 1\.000\] \(95%, these rows: Wilson on all runs \(0\/1 rewards\)\)$/);
    expect(await card.locator('.population').textContent()).toBe(`rows like these: [${num(population.low)}, ${num(population.high)}] (Wilson on the between-row variance (clustered by row))`);
    expect(await card.locator('.pass-at-k').textContent()).toMatch(/^pass@k: @1 1\.000 \[0\.\d{3}, 1\.000\]/);
  });

  it('filters by category and opens the transcript of a rollout, with its error and stack', async () => {
    await page.selectOption('#f-category', 'VALIDATION_ERROR');
    expect(await page.locator('#count').textContent()).toBe(`1 of ${report.overall.counts.total} rollouts`);
    await page.locator('.row').first().click();
    const transcript = page.locator('#transcript');
    await expect.poll(() => transcript.isVisible()).toBe(true);
    expect(await transcript.locator('.error').textContent()).toMatch(/^VALIDATION_ERROR in grader: the answer must be a non-empty string\n.*lookup\.rollout\.ts/s);
    await page.selectOption('#f-category', '');
  });

  it('shows a multi-turn transcript with tool calls and token counts', async () => {
    const suiteIndex = report.suites.findIndex((s: any) => s.name === 'calculator agent');
    await page.selectOption('#f-suite', String(suiteIndex));
    await page.locator('.row').first().click();
    const transcript = page.locator('#transcript');
    expect(await transcript.locator('.tool-call').count()).toBeGreaterThan(0);
    const record = report.suites[suiteIndex].records[0];
    const usage = record.usage.scripted;
    expect(await transcript.locator('.usage').textContent()).toBe(`tokens: scripted: ${usage.prompt} prompt (${usage.cached} cached) · ${usage.completion} completion`);
    const shot = path.join(out, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(errors).toEqual([]);
  });

  it('is written again for a stored run by `rollout-test report latest`', async () => {
    const file = path.join(out, 'again', 'index.html');
    const again = await runCli(REPO, ['report', 'latest', '--outputDir', path.join(out, 'runs-dir'), '--outputFile.html', file]);
    expect(again.exitCode, String(again.all)).toBe(0);
    const second = await browser.newPage();
    await second.goto(`file://${file}`);
    await second.waitForSelector('.card');
    expect(await shownMeans(second)).toEqual(expectedMeans());
    expect(await second.locator('#count').textContent()).toBe(`${report.overall.counts.total} of ${report.overall.counts.total} rollouts`);
    const missing = await runCli(REPO, ['report', 'nope', '--outputDir', path.join(out, 'runs-dir')]);
    expect(missing.exitCode).toBe(2);
  });
});
