import path from 'node:path';
import type { ComparedSuite, RunComparison } from '../../baseline/compare-sides.ts';
import type { FlippedRow, RowSummary } from '../../stats/index.ts';
import type { ComparisonSource } from '../../types/run-report.ts';
import { formatNumber } from '../format.ts';
import { readLines } from '../../output/read-lines.ts';
import { escapeXml as esc } from '../junit/xml.ts';
import { deltaText, pValueText, sourceText, verdictText } from '../comparison-format.ts';

const STYLE = `body{font:14px system-ui,sans-serif;margin:0 20px;color:#111}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}.regressed{color:#b91c1c}.improved{color:#15803d}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}pre{white-space:pre-wrap;background:#f6f6f6;padding:6px;margin:2px 0}summary{cursor:pointer}`;

interface Message {
  role?: unknown;
  content?: unknown;
  tool_calls?: Array<{ function?: { name?: unknown; arguments?: unknown } }>;
}

/** A run's transcripts of the rows a page shows: by row, then rollout id, the last sample's messages. */
type Transcripts = Map<string, Map<string, Message[]>>;

/** A rollout id `<suite key>.r<row>.n<run>` without its run: the row it belongs to. */
const rowOfRollout = (id: string) => /^(.*\.r\d+)\.n\d+$/.exec(id)?.[1] ?? id;
const rowId = (key: string, row: string) => `${key}.r${row}`;

/** The last sample's messages of each run of the rows `wanted` names, from a run's samples file, by row then rollout id. */
function transcripts(source: ComparisonSource, wanted: ReadonlySet<string>): Transcripts {
  const found: Transcripts = new Map();
  if (source.kind !== 'run') return found;
  for (const line of readLines(path.join(source.path, 'samples.jsonl'))) {
    if (!line) continue;
    const { id, samples } = JSON.parse(line) as { id: string; samples?: Array<{ messages?: Message[] }> };
    const row = rowOfRollout(id);
    if (!wanted.has(row)) continue;
    found.set(row, (found.get(row) ?? new Map()).set(id, samples?.at(-1)?.messages ?? []));
  }
  return found;
}

function messageHtml(message: Message): string {
  const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '', null, 2);
  const calls = (message.tool_calls ?? []).map((c) => `<pre>${esc(`${String(c.function?.name)}(${String(c.function?.arguments)})`)}</pre>`);
  return `<div><b>${esc(String(message.role))}</b><pre>${esc(content)}</pre>${calls.join('')}</div>`;
}

/** A side's result on a flipped row. */
const sideCell = (row: RowSummary) => `<td>passed ${row.passes ?? '?'}/${row.runs}, mean reward ${formatNumber(row.meanReward)}</td>`;

/** A side's transcripts of a row, each run under its rollout id. */
function sideTranscripts(label: string, runs: Map<string, Message[]> | undefined): string {
  const each = [...(runs ?? [])].map(([id, messages]) => `<h4>${esc(id)}</h4>${messages.map(messageHtml).join('')}`);
  return `<div><b>${label}</b>${each.join('') || '<p>no transcript</p>'}</div>`;
}

/**
 * How many flipped rows of a suite get their transcripts on the page, regressions first. Every flipped row is in
 * the table above them. The transcripts are what makes the page heavy: with all 4,000 flipped rows of 2 × 100,000
 * rollouts (8 transcripts each), chromium took 3.5 s to open it on a 2-core machine, and nobody reads 32,000
 * transcripts on one page; the JSON report lists every flipped row, and each run's samples.jsonl every transcript.
 */
export const TRANSCRIPT_ROWS = 100;

/** A flipped row's transcripts, both sides side by side, one click away: one `<details>` per row, not per run. */
function rowTranscripts(id: string, flipped: FlippedRow, a: Transcripts, b: Transcripts): string {
  const sides = `${sideTranscripts('A', a.get(id))}${sideTranscripts('B', b.get(id))}`;
  return `<details><summary>row ${esc(flipped.row)}</summary><div class="sides">${sides}</div></details>`;
}

/** A suite's flipped rows: all in one table, the first `TRANSCRIPT_ROWS` with their transcripts below it. */
function flippedSection(suite: ComparedSuite, a: Transcripts, b: Transcripts): string {
  const rows = suite.flipped.map((f) => `<tr><td>${esc(f.row)}</td>${sideCell(f.a)}${sideCell(f.b)}</tr>`);
  const shown = suite.flipped.slice(0, TRANSCRIPT_ROWS);
  const more = suite.flipped.length > shown.length ? ` (the first ${shown.length} of ${suite.flipped.length} flipped rows, regressions first; every rollout's transcript is in its run's samples.jsonl)` : '';
  return [
    `<section><h2>Flipped rows of ${esc(suite.name)}</h2>`,
    `<table><tr><th>Row</th><th>A</th><th>B</th></tr>${rows.join('')}</table>`,
    `<h3>Transcripts${esc(more)}</h3>${shown.map((f) => rowTranscripts(rowId(suite.key, f.row), f, a, b)).join('')}</section>`,
  ].join('');
}

/**
 * `compare --reporter html`: one self-contained page of the two runs side by side: per suite the delta with its
 * interval and verdict, and each flipped row with both sides' results and transcripts one click away. Everything
 * from the runs is escaped.
 */
export function comparePage(comparison: RunComparison): string {
  const needed = new Set(comparison.suites.flatMap((s) => s.flipped.slice(0, TRANSCRIPT_ROWS).map((f) => rowId(s.key, f.row))));
  const [a, b] = [transcripts(comparison.a, needed), transcripts(comparison.b, needed)];
  const rows = comparison.suites.map(
    (s) => `<tr><td>${esc(s.name)}</td><td>${s.pairedRows}</td><td>${esc(deltaText(s) || '–')}</td><td>${esc(pValueText(s) || '–')}</td><td class="${s.verdict === 'no detectable change' ? '' : s.verdict}">${esc(verdictText(s))}</td><td>${esc(s.test ?? '–')}</td></tr>`,
  );
  const flipped = comparison.suites.filter((s) => s.flipped.length).map((s) => flippedSection(s, a, b));
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>rollout-test compare</title><style>${STYLE}</style></head><body>`,
    '<h1>rollout-test compare</h1>',
    `<p>A: ${esc(sourceText(comparison.a))}</p><p>B: ${esc(sourceText(comparison.b))}</p>`,
    `<table><tr><th>Suite</th><th>Rows</th><th>Δ (B − A) [95% CI]</th><th>p</th><th>Verdict</th><th>Test</th></tr>${rows.join('')}</table>`,
    ...flipped,
    '</body></html>\n',
  ].join('');
}
