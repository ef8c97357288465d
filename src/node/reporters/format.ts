import path from 'node:path';
import type { RolloutRecord } from '../types/rollout-record.ts';

export function formatDuration(ms: number): string {
  // Each unit is chosen after rounding, so that 999.7 ms never reads `1000ms`, nor 359.6 s `5m 60s`.
  if (Math.round(ms) < 1000) return `${Math.round(ms)}ms`;
  if (Math.round(ms / 10) < 6000) return `${(ms / 1000).toFixed(2)}s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
}

/** A statistic to 3 decimals; `n/a` when there is none (no scored rollouts, e.g. an ungraded suite). */
export function formatNumber(value: number | null | undefined, digits = 3): string {
  return value === null || value === undefined ? 'n/a' : value.toFixed(digits);
}

export function relative(root: string, file: string): string {
  return path.relative(root, file) || file;
}

/** `suite › row 3 (id) › run 2`: how a rollout is named in every report. */
export function rolloutName(record: RolloutRecord): string {
  const row = record.rowId === undefined ? `row ${record.row}` : `row ${record.row} (${record.rowId})`;
  return `${record.suite} › ${row} › run ${record.run}`;
}

/** The first `max` characters of a text and `…` when it is longer; never half of a surrogate pair. */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max);
  return `${/[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head}…`;
}
