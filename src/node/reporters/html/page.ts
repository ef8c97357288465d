import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FROM_SOURCES, ownFileUrl } from '../../../package-files.ts';
import { esbuild } from '../../../runtime/esbuild.ts';
import type { RolloutRecord } from '../../types/rollout-record.ts';
import type { RunReport } from '../../types/run-report.ts';
import { statisticsText } from '../statistics-text.ts';
import { readLines } from '../../output/read-lines.ts';
import { TRAJECTORIES_DIR, trajectoryFileName } from '../../output/trajectory-files.ts';

const APP = fileURLToPath(ownFileUrl('node/reporters/html/app/app.js'));
const STYLE = `
body{font:14px system-ui,sans-serif;margin:0;color:#111}header{padding:12px 20px;background:#111;color:#fff}
#suites{display:flex;flex-wrap:wrap;gap:12px;padding:12px 20px}.card{border:1px solid #ddd;border-radius:8px;padding:8px 12px;width:580px}
.card h2{margin:4px 0;font-size:16px}.charts{display:flex;gap:8px;align-items:flex-start}.muted{color:#666}
.chart{margin:0}.chart figcaption{font-weight:600;margin:4px 0}.k-table{border-collapse:collapse;margin-top:4px}.k-table th,.k-table td{padding:1px 10px;text-align:right;border-bottom:1px solid #eee}
#filters{display:flex;gap:8px;padding:8px 20px}#viewport{height:420px;overflow:auto;position:relative;margin:0 20px;border:1px solid #ddd}
#rows{position:relative}.row,.head{height:28px;display:grid;grid-template-columns:2fr 1fr .5fr 1fr .7fr 1.3fr 4fr;gap:6px;align-items:center;padding:0 6px;white-space:nowrap;overflow:hidden;border-bottom:1px solid #f0f0f0}
.row{position:absolute;left:0;right:0;cursor:pointer}.head{position:sticky;top:0;z-index:1;background:#f6f6f6;font-weight:600}
.row span{overflow:hidden;text-overflow:ellipsis}.row.failed{background:#fff7ed}.row.errored{background:#fef2f2}
#transcript{margin:12px 20px;padding:8px 12px;border:1px solid #ddd;border-radius:8px}.message{margin:6px 0}.message pre,.error{white-space:pre-wrap;background:#f6f6f6;padding:6px;margin:2px 0}
.tool-call{background:#eef2ff!important}.step{border-left:3px solid #ddd;padding-left:8px;margin:6px 0}.step.agent{border-color:#2563eb}.observation{background:#f0fdf4!important}.partial{color:#b45309}
.history{display:flex;gap:8px;align-items:center}.strip i{display:inline-block;width:8px;height:12px;margin-right:1px}.strip .p{background:#16a34a}.strip .f{background:#dc2626}`;

let script: string | undefined;

/**
 * The page script with uPlot: bundled by the build (scripts/build.mjs, with these options), or from the sources
 * bundled here, once per process.
 */
export function pageScript(): string {
  script ??= FROM_SOURCES
    ? esbuild().buildSync({ entryPoints: [APP], bundle: true, format: 'iife', minify: true, write: false, platform: 'browser' }).outputFiles[0]!.text
    : readFileSync(APP, 'utf8');
  return script;
}

function uplotCss(): string {
  return readFileSync(createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css'), 'utf8');
}

/** JSON that is safe inside a `<script>` element. */
const embed = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** The rollout table's columns as app.js draws each row. */
const TABLE_HEADERS = ['suite', 'row', 'run', 'status', 'reward', 'category', 'message'];

const COLUMNS = ['id', 'suite', 'row', 'rowId', 'run', 'status', 'reward', 'category', 'message'] as const;

/** The run for the page: suites without their records (with their statistics worded as the other reports word them), and the records (each suite's, in its order) as compact arrays of `COLUMNS`. */
function runData(report: RunReport, bySuite: RolloutRecord[][]): object {
  const records = bySuite.flatMap((suiteRecords, suite) =>
    suiteRecords.map((r) => [r.id, suite, r.row, r.rowId ?? null, r.run, r.status, r.reward, r.error?.category ?? null, r.error?.message.split('\n')[0] ?? null]),
  );
  const categories = [...new Set(bySuite.flatMap((s) => s.map((r) => r.error?.category)).filter(Boolean))];
  const { suites, ...rest } = report;
  return { ...rest, suites: suites.map(({ records: _, ...suite }) => ({ ...suite, text: statisticsText(suite.stats) })), columns: COLUMNS, records, categories };
}

/** The rollout's ATIF trajectory in the run's folder, if it has one. */
function trajectoryOf(runDir: string | undefined, id: string): unknown {
  const file = runDir && path.join(runDir, TRAJECTORIES_DIR, trajectoryFileName(id));
  if (!file || !existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // a torn or edited file: the transcript still shows the messages
  }
}

/** What a transcript shows beside the messages: rewards, tokens, error, label, trial, and the trajectory's steps. */
function transcriptOf(record: RolloutRecord, messages: unknown[] | undefined, runDir: string | undefined): object {
  const trajectory = trajectoryOf(runDir, record.id);
  return { messages, rewards: record.rewards, usage: record.usage, error: record.error, label: record.details?.label?.text, trialDir: record.trialDir, trajectory };
}

/** The page's title, by which a file at the report's default place is known as one the tool wrote. */
export const PAGE_TITLE = 'rollout-test report';

/**
 * The HTML report: one self-contained page (no server, no network), the run's data embedded once and each
 * rollout's transcript in its own block, parsed only when opened. Produced a piece at a time.
 */
export function* htmlPage(report: RunReport): Generator<string> {
  yield `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${PAGE_TITLE}</title><style>${uplotCss()}${STYLE}</style></head><body>`;
  yield '<header><h1 id="title">rollout-test</h1></header><div id="suites"></div>';
  yield '<div id="filters"><select id="f-suite"><option value="">all suites</option></select><select id="f-status"><option value="">any status</option></select>';
  yield '<select id="f-category"><option value="">any category</option></select><input id="f-row" placeholder="row"><input id="f-search" placeholder="search"><span id="count"></span></div>';
  yield `<div id="viewport"><div id="table-head" class="head" role="row">${TABLE_HEADERS.map((name) => `<span role="columnheader">${name}</span>`).join('')}</div><div id="rows"></div></div><section id="transcript" hidden></section>`;
  // The page holds every record, so they are read back from the journal once, here.
  const bySuite = report.suites.map((s) => [...s.records]);
  yield `<script type="application/json" id="run-data">${embed(runData(report, bySuite))}</script>`;
  const records = bySuite.flat();
  const indexOf = new Map(records.map((r, i) => [r.id, i]));
  const written = new Set<number>();
  for (const line of report.runDir ? readLines(path.join(report.runDir, 'samples.jsonl')) : []) {
    if (!line) continue;
    const { id, samples } = JSON.parse(line) as { id: string; samples: Array<{ messages: unknown[] }> };
    const index = indexOf.get(id);
    if (index === undefined) continue;
    written.add(index);
    yield `<script type="application/json" id="t-${index}">${embed(transcriptOf(records[index]!, samples.at(-1)?.messages, report.runDir))}</script>`;
  }
  for (const [index, record] of records.entries()) {
    if (!written.has(index)) yield `<script type="application/json" id="t-${index}">${embed(transcriptOf(record, undefined, report.runDir))}</script>`;
  }
  yield `<script>${pageScript()}</script></body></html>\n`;
}
