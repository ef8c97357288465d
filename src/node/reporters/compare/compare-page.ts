import path from 'node:path';
import type { RunComparison } from '../../baseline/compare-sides.ts';
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

/** A rollout id `<suite key>.r<row>.n<run>` without its run: the row it belongs to. */
const rowOfRollout = (id: string) => /^(.*\.r\d+)\.n\d+$/.exec(id)?.[1] ?? id;
const rowId = (key: string, row: string) => `${key}.r${row}`;

/** The last sample's messages of each run of the rows `wanted` names, from a run's samples file, by row then rollout id. */
function transcripts(source: ComparisonSource, wanted: ReadonlySet<string>): Map<string, Map<string, Message[]>> {
  const found = new Map<string, Map<string, Message[]>>();
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

/** A side's result on a flipped row, always shown. */
const sideHead = (label: string, row: RowSummary) => `<div><b>${label}</b>: passed ${row.passes ?? '?'}/${row.runs}, mean reward ${formatNumber(row.meanReward)}</div>`;

/** A side's transcripts of a row, each run under its rollout id. */
function sideTranscripts(label: string, runs: Map<string, Message[]> | undefined): string {
  const each = [...(runs ?? [])].map(([id, messages]) => `<h4>${esc(id)}</h4>${messages.map(messageHtml).join('')}`);
  return `<div><b>${label}</b>${each.join('') || '<p>no transcript</p>'}</div>`;
}

/**
 * A flipped row: both sides' results, and their transcripts one click away. One `<details>` per row, not per run:
 * each is a shadow tree to the browser, and a comparison of 2 × 100,000 rollouts with 4,000 flipped rows took
 * chromium 20 s to open with one per run (32,000), 2.6–4.2 s with one per row, on a loaded 2-core machine.
 */
function flippedRowHtml(key: string, flipped: FlippedRow, a: Map<string, Map<string, Message[]>>, b: Map<string, Map<string, Message[]>>): string {
  const id = rowId(key, flipped.row);
  const transcripts = `${sideTranscripts('A', a.get(id))}${sideTranscripts('B', b.get(id))}`;
  return `<h3>row ${esc(flipped.row)}</h3><div class="sides">${sideHead('A', flipped.a)}${sideHead('B', flipped.b)}</div><details><summary>transcripts</summary><div class="sides">${transcripts}</div></details>`;
}

/**
 * `compare --reporter html`: one self-contained page of the two runs side by side: per suite the delta with its
 * interval and verdict, and each flipped row with both sides' results and transcripts one click away. Everything
 * from the runs is escaped.
 */
export function comparePage(comparison: RunComparison): string {
  const needed = new Set(comparison.suites.flatMap((s) => s.flipped.map((f) => rowId(s.key, f.row))));
  const [a, b] = [transcripts(comparison.a, needed), transcripts(comparison.b, needed)];
  const rows = comparison.suites.map(
    (s) => `<tr><td>${esc(s.name)}</td><td>${s.pairedRows}</td><td>${esc(deltaText(s) || '–')}</td><td>${esc(pValueText(s) || '–')}</td><td class="${s.verdict === 'no detectable change' ? '' : s.verdict}">${esc(verdictText(s))}</td><td>${esc(s.test ?? '–')}</td></tr>`,
  );
  const flipped = comparison.suites.filter((s) => s.flipped.length).map((s) => {
    const items = s.flipped.map((f) => flippedRowHtml(s.key, f, a, b));
    return `<section><h2>Flipped rows of ${esc(s.name)}</h2>${items.join('')}</section>`;
  });
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>rollout-test compare</title><style>${STYLE}</style></head><body>`,
    '<h1>rollout-test compare</h1>',
    `<p>A: ${esc(sourceText(comparison.a))}</p><p>B: ${esc(sourceText(comparison.b))}</p>`,
    `<table><tr><th>Suite</th><th>Rows</th><th>Δ (B − A) [95% CI]</th><th>p</th><th>Verdict</th><th>Test</th></tr>${rows.join('')}</table>`,
    ...flipped,
    '</body></html>\n',
  ].join('');
}
