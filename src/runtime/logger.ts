import { format } from 'node:util';
import { bounded } from './errors.ts';
import type { RolloutLogger } from './workflow.ts';

const MAX_LINES = 500;

/** A logger that keeps its lines with the rollout instead of interleaving them on the terminal. */
export function createCapturingLogger(): { logger: RolloutLogger; lines: string[] } {
  const lines: string[] = [];
  const write = (level: string) => (...args: unknown[]) => {
    if (lines.length < MAX_LINES) lines.push(`[${level}] ${bounded(format(...args))}`);
    else if (lines.length === MAX_LINES) lines.push(`[warn] log truncated after ${MAX_LINES} lines`);
  };
  return { logger: { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') }, lines };
}
