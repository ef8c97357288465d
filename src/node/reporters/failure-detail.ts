// The line diff alone: the package's index loads its 19 modules (patches, JSON, CSS diffs), ~35 ms of CPU at every start.
import { diffLines } from 'diff/lib/diff/line.js';
import type { TextExcerpt } from '../types/rollout-details.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import { formatLocation } from '../stack/user-frame.ts';
import { formatNumber } from './format.ts';

/** How the lines of a detail are painted: `-` label, `+` answer, dim notes. Plain text by default. */
export interface DetailPaint {
  removed(text: string): string;
  added(text: string): string;
  dim(text: string): string;
}

const PLAIN: DetailPaint = { removed: (t) => t, added: (t) => t, dim: (t) => t };

/** Lines of a diff shown before the rest is only counted. */
const MAX_DIFF_LINES = 24;
/** Unchanged lines kept around each change. */
const CONTEXT = 2;

function cutNote(name: string, text: TextExcerpt): string[] {
  return text.chars > text.text.length ? [`(${name} cut to ${text.text.length} of ${text.chars.toLocaleString('en-US')} characters)`] : [];
}

/** Unchanged runs longer than the context on both sides are folded to `…`. */
function diffBody(label: string, answer: string, paint: DetailPaint): string[] {
  const lines: string[] = [];
  const parts = diffLines(label, answer);
  parts.forEach((part, index) => {
    const text = part.value.endsWith('\n') ? part.value.slice(0, -1) : part.value;
    const own = text.split('\n');
    if (part.added) lines.push(...own.map((l) => paint.added(`+ ${l}`)));
    else if (part.removed) lines.push(...own.map((l) => paint.removed(`- ${l}`)));
    else {
      const head = index === 0 ? [] : own.slice(0, CONTEXT);
      const tail = index === parts.length - 1 ? [] : own.slice(-CONTEXT);
      if (head.length + tail.length >= own.length) lines.push(...own.map((l) => `  ${l}`));
      else lines.push(...head.map((l) => `  ${l}`), paint.dim('  …'), ...tail.map((l) => `  ${l}`));
    }
  });
  if (lines.length <= MAX_DIFF_LINES) return lines;
  return [...lines.slice(0, MAX_DIFF_LINES), paint.dim(`… ${lines.length - MAX_DIFF_LINES} more lines`)];
}

/**
 * The agent's final answer against the label, as Vitest shows expected against received: a line diff when
 * both are text, the answer alone when there is no label. Each excerpt says when it was cut, and to what.
 */
export function answerLines(details: RolloutRecord['details'], paint: DetailPaint = PLAIN): string[] {
  const { answer, label } = details ?? {};
  if (!answer) return label ? [paint.dim('no final answer (no assistant message in the samples)'), `label: ${label.text}`] : [];
  if (!label) return [`answer: ${answer.text}`, ...cutNote('answer', answer).map(paint.dim)];
  if (answer.text === label.text) return [`answer and label are equal: ${answer.text}`];
  const notes = [...cutNote('label', label), ...cutNote('answer', answer)].map(paint.dim);
  if (!answer.text.includes('\n') && !label.text.includes('\n')) {
    return [paint.removed(`Expected (label):  ${JSON.stringify(label.text)}`), paint.added(`Received (answer): ${JSON.stringify(answer.text)}`), ...notes];
  }
  return [
    `${paint.removed('- Expected (label)')}`,
    `${paint.added('+ Received (answer)')}`,
    '',
    ...diffBody(label.text, answer.text, paint),
    ...notes,
  ];
}

/** The reward's parts other than `reward` itself, e.g. `exact 0 · format 1`. */
export function rewardComponents(record: RolloutRecord): string | undefined {
  const parts = Object.entries(record.rewards).filter(([name]) => name !== 'reward');
  return parts.length ? parts.map(([name, value]) => `${name} ${formatNumber(value)}`).join(' · ') : undefined;
}

/** What the verifier printed last, each stream under a heading that says how much of it is shown. */
export function verifierLines(details: RolloutRecord['details'], paint: DetailPaint = PLAIN): string[] {
  return (details?.verifierOutput ?? []).flatMap(({ stream, text, lines }) => {
    const own = text.split('\n');
    const shown = own.length < lines ? ` (last ${own.length} of ${lines.toLocaleString('en-US')} lines)` : '';
    return [paint.dim(`verifier ${stream}${shown}:`), ...own.map((line) => `  ${line}`)];
  });
}

/** Where the rollout's trial is, for reports that name it beside the details. */
export const trialLines = (record: RolloutRecord, paint: DetailPaint = PLAIN): string[] => (record.trialDir ? [paint.dim(`trial: ${record.trialDir}`)] : []);

/** The evidence beside a rollout's outcome: reward components, answer against label, what the verifier printed. */
export function evidenceLines(record: RolloutRecord, paint: DetailPaint = PLAIN): string[] {
  const components = rewardComponents(record);
  // A workflow that failed before answering has nothing to compare: its error says it all.
  const answer = record.status === 'errored' && !record.details?.answer ? [] : answerLines(record.details, paint);
  return [...(components ? [`components: ${components}`] : []), ...answer, ...verifierLines(record.details, paint)];
}

/** Everything a report says about a rollout that did not pass, as plain lines: the error, where, the evidence (not the trial: each report names it once, where it fits). */
export function detailLines(record: RolloutRecord, root: string, paint: DetailPaint = PLAIN): string[] {
  const lines: string[] = [];
  if (record.error) {
    lines.push(`${record.error.category} in ${record.error.phase}: ${record.error.message}`);
    if (record.details?.frame) lines.push(paint.dim(`at ${formatLocation(root, record.details.frame)}`));
  }
  return [...lines, ...evidenceLines(record, paint)];
}
