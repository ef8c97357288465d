// H1: the HTML report of a run of 100,000 rollouts: how long writing it takes, how big it is, and how long
// Debian's chromium (via playwright-core) takes to open it from file:// and draw the cards and table, with the
// page's JS heap after. Needs `npm run build` and chromium (CHROMIUM_PATH, default /usr/bin/chromium).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { tsImport } from 'tsx/esm/api';
import { REPO } from './lib/workloads.mjs';

// The build bundles these modules into shared chunks, under no path of their own: the sources are loaded (tsx).
const source = (file) => tsImport(pathToFileURL(path.join(REPO, 'src', file)).href, import.meta.url);

/** A report as a run of `count` rollouts over 10 suites (4 runs per row) would give, a mix of outcomes. */
async function syntheticReport(count) {
  const { buildSuiteReport } = await source('node/run/suite-report.ts');
  const { SuiteRecords } = await source('node/output/suite-records.ts');
  const { summarizeOutcomes } = await source('node/stats/summary.ts');
  const perSuite = count / 10;
  const suites = Array.from({ length: 10 }, (_, s) => {
    const records = Array.from({ length: perSuite }, (_, i) => {
      const reward = (i * 7919) % 10 < 6 ? 1 : ((i * 31) % 10) / 10;
      const errored = i % 97 === 0;
      return {
        id: `suite-${s}.r${Math.floor(i / 4) + 1}.n${(i % 4) + 1}`, suite: `suite ${s}`, file: '/bench/x.rollout.ts', row: Math.floor(i / 4) + 1,
        rowId: undefined, where: 'inline', run: (i % 4) + 1, status: errored ? 'errored' : reward >= 1 ? 'passed' : 'failed', reward: errored ? null : reward,
        rewards: errored ? {} : { reward }, error: errored ? { category: 'AGENT_ERROR', phase: 'workflow', message: 'tool exploded', stack: 'Error: tool exploded' } : undefined,
        durationMs: 100, timings: { queuedMs: 0, workflowMs: 90, graderMs: 10 },
      };
    });
    const meta = { name: `suite ${s}`, file: '/bench/x.rollout.ts', key: `suite-${s}`, backend: 'local', runs: 4, passThreshold: 1, thresholds: {} };
    return buildSuiteReport(meta, SuiteRecords.of(records), 1000);
  });
  const overall = summarizeOutcomes(suites.flatMap((s) => s.records.outcomes(`${s.key}\0`)), { passThreshold: 1 });
  return { version: 1, startedAt: new Date().toISOString(), durationMs: 1000, root: '/bench', suites, overall, interrupted: undefined, exitCode: 1 };
}

export async function measureHtmlReport(count = 100_000) {
  const { htmlPage } = await source('node/reporters/html/page.ts');
  const { writeReport } = await source('node/reporters/write-report.ts');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-bench-html-'));
  const file = path.join(dir, 'index.html');
  const report = await syntheticReport(count);
  let started = performance.now();
  writeReport(htmlPage(report), file, { write() {}, interactive: false });
  const writeMs = performance.now() - started;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    started = performance.now();
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('.row');
    const openMs = performance.now() - started;
    await page.selectOption('#f-status', 'errored');
    const shown = await page.locator('#count').textContent();
    const client = await page.context().newCDPSession(page);
    await client.send('Performance.enable');
    const { metrics } = await client.send('Performance.getMetrics');
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize').value / 2 ** 20;
    return { writeMs, openMs, heapMB: heap, fileMB: statSync(file).size / 2 ** 20, shown };
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) console.log(await measureHtmlReport(Number(process.argv[2] ?? 100_000)));
