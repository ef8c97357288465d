/**
 * The HTML report of a tool-calling rollout, opened in Debian's chromium (driven by playwright-core, as in
 * html-report.test.ts): its transcript shows every message's text, parts and tool calls and never a literal
 * `undefined` or `null`; the rollout table has column headers; pass@k is labelled and its values are listed.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';
import { openReportPage } from './helpers/report-page.ts';

const project = makeProject({
  'rollouts/tools.rollout.ts': `
import { defineRollout } from 'rollout-test';
export class ToolAgent {
  async run(ctx) {
    return [
      ...ctx.prompt,
      { role: 'user', content: [{ type: 'text', text: 'Add the numbers in ' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'add', content: '5' },
      { role: 'assistant', content: null },
      { role: 'assistant', content: [{ type: 'text', text: 'The sum is ' }, { type: 'text', text: '5.' }] },
    ];
  }
}
export class ByRow {
  grade(ctx) {
    return ctx.label === 'pass' ? 1 : 0;
  }
}
defineRollout({
  name: 'tools',
  n: 4,
  dataset: [{ id: 'good', prompt: 'add', label: 'pass' }, { id: 'bad', prompt: 'add', label: 'fail' }],
  workflow: ToolAgent,
  grader: ByRow,
});`,
});

describe('the HTML transcript of a tool-calling rollout', async () => {
  const run = await runCli(project, ['run', '--reporter', 'html', '--outputFile.html', 'report/index.html']);
  let browser: Browser;
  let page: Page;
  let errors: string[] = [];

  beforeAll(async () => {
    ({ browser, page, errors } = await openReportPage(path.join(project, 'report', 'index.html')));
  }, 60_000);
  afterAll(() => browser?.close());

  it('names the rollout table\'s columns', async () => {
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(await page.locator('#table-head [role=columnheader]').allTextContents()).toEqual(['suite', 'row', 'run', 'status', 'reward', 'category', 'message']);
  });

  it('labels pass@k and pass^k, and lists their values by k', async () => {
    const card = page.locator('.card').first();
    expect(await card.locator('.u-legend').textContent()).toMatch(/pass@k.*pass\^k/);
    expect(await card.locator('.k-table th').allTextContents()).toEqual(['k', 'pass@k', 'pass^k']);
    expect(await card.locator('.k-table tbody tr').allInnerTexts()).toEqual(['1\t0.500\t0.500', '2\t0.500\t0.500', '4\t0.500\t0.500']);
  });

  it('shows each message\'s text, parts and tool calls, never undefined or null', async () => {
    await page.locator('.row').first().click();
    const transcript = page.locator('#transcript');
    await expect.poll(() => transcript.isVisible()).toBe(true);
    // Rendered text, as a reader sees it (allInnerTexts: line breaks where blocks are).
    expect((await transcript.allInnerTexts()).join('')).not.toMatch(/undefined|null/);
    expect((await page.locator('body').allInnerTexts()).join('')).not.toMatch(/undefined|null/);
    expect((await transcript.locator('.message').allInnerTexts()).slice(1)).toEqual([
      'user\nAdd the numbers in [image_url]',
      'assistant\nadd({"a":2,"b":3})',
      'tool (add, call_1)\n5',
      'assistant\n(no content)',
      'assistant\nThe sum is 5.',
    ]);
    const shot = path.join(project, 'transcript.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(errors).toEqual([]);
  });
});
