// The HTML report's page script, bundled with uPlot into index.html by the html reporter (see page.ts).
// Data comes from <script type="application/json"> blocks: the run once, each transcript only when opened.
import uPlot from 'uplot';

const ROW_HEIGHT = 28;
const run = JSON.parse(document.getElementById('run-data').textContent);
const { suites, records } = run;
const $ = (selector) => document.querySelector(selector);
// Optional parts are passed as undefined: appended as they are, the DOM would print them as the text "undefined".
const present = (children) => children.filter((c) => c !== undefined && c !== null);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...present(children));
  return node;
};
const num = (v, digits = 3) => (v === null || v === undefined ? '–' : Number(v).toFixed(digits));
const duration = (ms) => (ms < 1000 ? `${Math.round(ms)}ms` : ms < 60000 ? `${(ms / 1000).toFixed(2)}s` : `${Math.floor(ms / 60000)}m ${Math.round((ms % 60000) / 1000)}s`);

// Records are columns in arrays (compact for 100,000 rollouts): index → field.
const field = (name) => run.columns.indexOf(name);
const COL = Object.fromEntries(run.columns.map((name) => [name, field(name)]));

/** A titled chart's place in a card. */
function figure(target, title) {
  const box = el('figure', { className: 'chart' }, el('figcaption', { textContent: title }));
  target.append(box);
  return box;
}

/** pass@k and pass^k by k: the curve, and the same values as a table (a chart alone cannot be read exactly). */
function kChart(target, stats) {
  const ks = Object.keys(stats.passAtK).map(Number);
  if (ks.length < 2) return target.append(el('p', { className: 'muted', textContent: `pass@1 ${num(stats.passAtK['1'])} (one run per row: no curve)` }));
  const box = figure(target, 'pass@k and pass^k by k');
  const data = [ks, ks.map((k) => stats.passAtK[k]), ks.map((k) => stats.passHatK[k])];
  new uPlot({ width: 290, height: 170, legend: { live: false }, scales: { x: { time: false }, y: { range: [0, 1] } }, axes: [{ label: 'k (runs drawn per row)' }, { label: 'probability' }],
    series: [{ label: 'k' }, { label: 'pass@k', stroke: '#2563eb', width: 2 }, { label: 'pass^k', stroke: '#dc2626', width: 2, dash: [6, 4] }] }, data, box);
  const cells = (tag, values) => el('tr', {}, ...values.map((textContent) => el(tag, { textContent })));
  box.append(el('table', { className: 'k-table' }, el('thead', {}, cells('th', ['k', 'pass@k', 'pass^k'])),
    el('tbody', {}, ...ks.map((k) => cells('td', [String(k), num(stats.passAtK[k]), num(stats.passHatK[k])])))));
}

function histogram(target, suiteIndex) {
  const bins = 10;
  const counts = new Array(bins).fill(0);
  for (const r of records) {
    const reward = r[COL.reward];
    if (r[COL.suite] !== suiteIndex || reward === null) continue;
    counts[Math.min(bins - 1, Math.max(0, Math.floor(reward * bins)))]++;
  }
  const xs = counts.map((_, i) => i / bins + 0.05);
  new uPlot({ width: 290, height: 170, scales: { x: { time: false, range: [0, 1] } }, legend: { show: false }, axes: [{ label: 'reward' }, { label: 'rollouts' }],
    series: [{}, { label: 'rollouts', fill: '#93c5fd', stroke: '#2563eb', paths: uPlot.paths.bars({ size: [0.9] }) }] }, [xs, counts], figure(target, 'rewards'));
}

// Each row's recent pass/fail history (runs with unchanged inputs), flakiest first: a strip of marks per row.
const HISTORY_ROWS = 50;
function rowHistory(flaky) {
  if (!flaky || flaky.length === 0) return undefined;
  const strip = (history) => el('span', { className: 'strip', title: history }, ...[...history].map((mark) => el('i', { className: mark === 'P' ? 'p' : 'f' })));
  const lines = flaky.slice(0, HISTORY_ROWS).map((row) =>
    el('div', { className: 'history' }, el('span', { textContent: `row ${row.row}` }), strip(row.history), el('span', { className: 'muted', textContent: `${row.flips} flips / ${row.runs}` })));
  const more = flaky.length > HISTORY_ROWS ? el('p', { className: 'muted', textContent: `and ${flaky.length - HISTORY_ROWS} more rows` }) : undefined;
  return el('details', {}, el('summary', { textContent: 'row history (recent runs)' }), ...lines, more);
}

function suiteCard(suite, index) {
  const s = suite.stats;
  const c = s.counts;
  const errors = Object.entries(s.errorsByCategory).map(([cat, n]) => `${cat} ${n}`).join(', ') || 'none';
  const b = suite.baseline;
  const verdict = b && (b.verdict !== 'no detectable change' ? b.verdict : b.mde === null ? `${b.verdict}; too few rows to detect any change` : `${b.verdict}; could detect ±${num(b.mde)}`);
  const baseline = b ? `${verdict}${b.delta === null ? '' : ` · Δ ${num(b.delta)}${b.low === null ? '' : ` [${num(b.low)}, ${num(b.high)}]`}`}` : undefined;
  const charts = el('div', { className: 'charts' });
  const card = el('section', { className: 'card' },
    el('h2', { textContent: suite.name }),
    el('p', { className: 'mean', textContent: suite.text.meanReward }),
    el('p', { className: 'population', textContent: suite.text.population }),
    el('p', { className: 'pass-at-k', textContent: suite.text.passAtK }),
    suite.text.variance ? el('p', { className: 'variance', textContent: suite.text.variance }) : undefined,
    suite.text.adaptive ? el('p', { className: 'adaptive', textContent: suite.text.adaptive }) : undefined,
    el('p', { textContent: `${c.total} rollouts · ${c.passed} passed · ${c.failed} failed · ${c.errored} errored · ${c.skipped} skipped · ${duration(suite.durationMs)}` }),
    el('p', { className: 'errors', textContent: `errors: ${errors}` }),
    suite.text.infrastructure ? el('p', { className: 'infrastructure', textContent: suite.text.infrastructure }) : undefined,
    suite.cost ? el('p', { textContent: `cost ${num(suite.cost.total, 4)}` }) : undefined,
    baseline ? el('p', { className: 'baseline', textContent: `vs baseline: ${baseline}` }) : undefined,
    suite.partial ? el('p', { className: 'partial', textContent: `partial: the budget stopped it after ${c.total - c.skipped} of ${c.total} rollouts; gate and baseline inconclusive` }) : undefined,
    rowHistory(suite.flaky),
    charts);
  $('#suites').append(card);
  if (!suite.error) {
    kChart(charts, s);
    histogram(charts, index);
  }
}

// The table: only the visible rows are in the DOM, so 100,000 rollouts scroll like 100.
let shown = records.map((_, i) => i);
const body = $('#rows');
const viewport = $('#viewport');
function renderRows() {
  const first = Math.floor(viewport.scrollTop / ROW_HEIGHT);
  const count = Math.ceil(viewport.clientHeight / ROW_HEIGHT) + 2;
  body.style.height = `${shown.length * ROW_HEIGHT}px`;
  body.replaceChildren(...shown.slice(first, first + count).map((index, offset) => {
    const r = records[index];
    const row = el('div', { className: `row ${r[COL.status]}`, onclick: () => openTranscript(index) },
      ...[suites[r[COL.suite]].name, r[COL.rowId] ?? r[COL.row], r[COL.run], r[COL.status], num(r[COL.reward]), r[COL.category] ?? '', r[COL.message] ?? ''].map((text) => el('span', { textContent: String(text) })));
    row.style.top = `${(first + offset) * ROW_HEIGHT}px`;
    row.dataset.index = String(index);
    return row;
  }));
  $('#count').textContent = `${shown.length} of ${records.length} rollouts`;
}
viewport.addEventListener('scroll', () => requestAnimationFrame(renderRows));

function applyFilters() {
  const suite = $('#f-suite').value;
  const status = $('#f-status').value;
  const category = $('#f-category').value;
  const row = $('#f-row').value.trim();
  const search = $('#f-search').value.trim().toLowerCase();
  shown = [];
  records.forEach((r, i) => {
    if (suite !== '' && r[COL.suite] !== Number(suite)) return;
    if (status && r[COL.status] !== status) return;
    if (category && r[COL.category] !== category) return;
    if (row && String(r[COL.row]) !== row && r[COL.rowId] !== row) return;
    if (search && !`${r[COL.id]} ${r[COL.rowId] ?? ''} ${r[COL.message] ?? ''}`.toLowerCase().includes(search)) return;
    shown.push(i);
  });
  viewport.scrollTop = 0;
  renderRows();
}

function options(select, values) {
  select.append(...values.map(([value, label]) => el('option', { value, textContent: label })));
  select.addEventListener('change', applyFilters);
}

/** A content part as text: a text part's text, any other part by its type (`[image_url]`), else as JSON. */
const partText = (part) => (typeof part === 'string' ? part : typeof part?.text === 'string' ? part.text : typeof part?.type === 'string' ? `[${part.type}]` : JSON.stringify(part));

/** A message's content as text: a string, or its parts run together as a model reads them; empty for null. */
const contentText = (content) => (typeof content === 'string' ? content : Array.isArray(content) ? content.map(partText).join('') : '');

const callText = (call) => (call?.function ? `${call.function.name ?? '?'}(${call.function.arguments ?? ''})` : JSON.stringify(call));

function messageView(message) {
  const calls = (Array.isArray(message.tool_calls) ? message.tool_calls : []).map((c) => el('pre', { className: 'tool-call', textContent: callText(c) }));
  const text = contentText(message.content);
  // A tool result says which call it answers; a turn that neither says nor calls anything says so.
  const about = [message.name, message.tool_call_id].filter((v) => typeof v === 'string' && v);
  const role = `${message.role}${about.length ? ` (${about.join(', ')})` : ''}`;
  const empty = text || calls.length ? undefined : el('div', { className: 'muted', textContent: '(no content)' });
  return el('div', { className: `message ${message.role}` }, el('b', { textContent: role }), text ? el('pre', { textContent: text }) : undefined, ...calls, empty);
}

// An ATIF trajectory (trajectories/<rollout-id>.json): a step per message and per model call, with its tool calls,
// their results and the call's metrics.
const count = (label, value) => (typeof value === 'number' ? `${label} ${value}` : undefined);
function metricsText(m, final) {
  if (!m) return '';
  const p = final ? 'total_' : '';
  const cached = typeof m[`${p}cached_tokens`] === 'number' ? ` (${m[`${p}cached_tokens`]} cached)` : '';
  const prompt = count('prompt', m[`${p}prompt_tokens`]);
  const ids = (name, list) => (Array.isArray(list) ? `${list.length} ${name}` : undefined);
  return present([prompt && prompt + cached, count('completion', m[`${p}completion_tokens`]), typeof m[`${p}cost_usd`] === 'number' ? `cost $${m[`${p}cost_usd`].toPrecision(3)}` : undefined,
    count('steps', m.total_steps), ids('prompt token ids', m.prompt_token_ids), ids('completion token ids', m.completion_token_ids), ids('logprobs', m.logprobs)]).join(' · ');
}
function stepView(step) {
  const head = present([`#${step.step_id} ${step.source}`, step.model_name, step.llm_call_count > 1 ? `${step.llm_call_count} calls` : undefined]).join(' · ');
  const text = contentText(step.message);
  const calls = (step.tool_calls ?? []).map((c) => el('pre', { className: 'tool-call', textContent: `${c.function_name}(${JSON.stringify(c.arguments)})` }));
  const results = (step.observation?.results ?? []).map((r) => el('pre', { className: 'observation', textContent: `→ ${contentText(r.content)}${r.source_call_id ? `  (${r.source_call_id})` : ''}` }));
  const metrics = metricsText(step.metrics);
  return el('div', { className: `step ${step.source}` }, el('b', { textContent: head }), text ? el('pre', { textContent: text }) : undefined, ...calls, ...results,
    metrics ? el('div', { className: 'metrics muted', textContent: metrics }) : undefined);
}
function trajectoryView(t) {
  if (!t || !Array.isArray(t.steps)) return undefined;
  const agent = present([t.agent?.name, t.agent?.model_name]).join(' · ');
  return el('details', { className: 'trajectory', open: true }, el('summary', { textContent: `trajectory (${t.schema_version ?? 'ATIF'}): ${agent}` }),
    el('p', { className: 'final-metrics', textContent: metricsText(t.final_metrics, true) }), ...t.steps.map(stepView));
}

function openTranscript(index) {
  const r = records[index];
  const block = document.getElementById(`t-${index}`);
  const t = block ? JSON.parse(block.textContent) : {};
  const panel = $('#transcript');
  const usage = Object.entries(t.usage ?? {}).map(([model, u]) => `${model}: ${u.prompt} prompt (${u.cached} cached) · ${u.completion} completion`).join('; ');
  panel.replaceChildren(...present([
    el('h2', { textContent: `${suites[r[COL.suite]].name} › row ${r[COL.rowId] ?? r[COL.row]} › run ${r[COL.run]}` }),
    el('p', { className: 'status', textContent: `${r[COL.status]} · reward ${num(r[COL.reward])}` }),
    t.rewards ? el('p', { className: 'components', textContent: `rewards: ${Object.entries(t.rewards).map(([k, v]) => `${k} ${num(v)}`).join(' · ')}` }) : undefined,
    usage ? el('p', { className: 'usage', textContent: `tokens: ${usage}` }) : undefined,
    t.error ? el('pre', { className: 'error', textContent: `${t.error.category} in ${t.error.phase}: ${t.error.message}\n${t.error.stack ?? ''}` }) : undefined,
    t.label !== undefined ? el('p', { textContent: `label: ${t.label}` }) : undefined,
    t.trialDir ? el('p', { textContent: `trial: ${t.trialDir}` }) : undefined,
    ...(t.messages ?? []).map(messageView),
    trajectoryView(t.trajectory),
  ]));
  panel.hidden = false;
}

const stopped = run.budget && run.budget.ran < run.budget.planned ? ` · partial: stopped at the budget: ${run.budget.ran} of ${run.budget.planned} rollouts ran` : '';
$('#title').textContent = `rollout-test · ${run.startedAt} · ${run.overall.counts.total} rollouts · exit ${run.exitCode}${stopped}`;
suites.forEach(suiteCard);
options($('#f-suite'), suites.map((s, i) => [String(i), s.name]));
options($('#f-status'), ['passed', 'failed', 'errored', 'skipped'].map((s) => [s, s]));
options($('#f-category'), run.categories.map((c) => [c, c]));
$('#f-row').addEventListener('input', applyFilters);
$('#f-search').addEventListener('input', applyFilters);
renderRows();
