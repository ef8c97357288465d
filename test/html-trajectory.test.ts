/**
 * The HTML report renders each rollout's ATIF trajectory (opened in Debian's chromium, as html-transcript.test.ts
 * does): its steps, tool calls with their results, each call's metrics and the totals.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calculatorProject } from './helpers/calculator-project.ts';
import { runCli } from './helpers/project.ts';
import { openReportPage } from './helpers/report-page.ts';

describe('the HTML report of a rollout with a trajectory', async () => {
  const project = calculatorProject();
  const run = await runCli(project, ['run', '-t', '^calc$', '--reporter', 'html', '--outputFile.html', 'report/index.html']);
  let browser: Browser;
  let page: Page;
  let errors: string[] = [];

  beforeAll(async () => {
    ({ browser, page, errors } = await openReportPage(path.join(project, 'report', 'index.html')));
  }, 60_000);
  afterAll(() => browser?.close());

  it('shows its steps, tool calls and their results, and the metrics of each call and of all', async () => {
    expect(run.exitCode, String(run.all)).toBe(0);
    await page.locator('.row', { hasText: 'two' }).first().click();
    const trajectory = page.locator('#transcript .trajectory');
    await expect.poll(() => trajectory.isVisible()).toBe(true);
    expect(await trajectory.locator('summary').textContent()).toBe('trajectory (ATIF-v1.7): CalculatorAgentWorkflow · scripted');
    expect(await trajectory.locator('.final-metrics').textContent()).toMatch(/^prompt \d+ \(6 cached\) · completion \d+ · cost \$[\d.e-]+ · steps 5$/);
    const steps = await trajectory.locator('.step').allInnerTexts();
    expect(steps).toHaveLength(5);
    expect(steps[0]).toBe('#1 system\nUse the calculator.');
    expect(steps[2]).toMatch(/^#3 agent · scripted\ncalculator\({"expression":"2\+3"}\)\n→ 5 {2}\(call_\w+\)\nprompt \d+ \(2 cached\) · completion \d+ · cost \$[\d.e-]+ · \d+ prompt token ids · \d+ completion token ids$/);
    expect(steps[4]).toMatch(/^#5 agent · scripted\nResults: 5, 20\.\nprompt \d+ \(2 cached\) · completion \d+ · cost .* · \d+ logprobs$/);
    expect((await trajectory.allInnerTexts()).join('')).not.toMatch(/undefined|null|NaN/);
    expect(errors).toEqual([]);
  });
});
