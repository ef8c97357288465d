import path from 'node:path';
import type { RolloutRecord } from '../types/rollout-record.ts';

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)}s`;
  return `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
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
