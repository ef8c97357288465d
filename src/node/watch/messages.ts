import path from 'node:path';
import type { Terminal } from '../reporters/terminal.ts';
import type { RerunMode } from './suite-deps.ts';

/** The keys of watch mode, as `h` prints them. */
export function helpText({ colors }: Terminal): string {
  const key = (k: string, what: string) => `  press ${colors.bold(k)} to ${what}`;
  return [
    '',
    colors.bold('Watch usage'),
    key('a', 'rerun all suites'),
    key('f', 'rerun the suites that failed'),
    key('p', 'filter by file name'),
    key('t', 'filter by suite name (a regular expression)'),
    key('h', 'show this help'),
    key('q', 'quit (Ctrl-C too, when no run is going on)'),
    '',
  ].join('\n');
}

/** The line a watcher shows while it waits. */
export function waitingLine({ colors }: Terminal): string {
  return `\n${colors.dim('Waiting for file changes… press')} h ${colors.dim('for help,')} q ${colors.dim('to quit')}\n`;
}

const suiteNames = (modes: Map<string, { name: string; mode: RerunMode }>, mode: RerunMode) =>
  [...modes.values()].filter((m) => m.mode === mode).map((m) => m.name);

/** The header of a rerun: what triggered it, and which suites run and which are re-graded. */
export function rerunHeader({ colors }: Terminal, trigger: string, modes: Map<string, { name: string; mode: RerunMode }>): string {
  const runs = suiteNames(modes, 'run');
  const regrades = suiteNames(modes, 'regrade');
  const lines = [`\n${colors.inverse(colors.blue(' RERUN '))} ${trigger}`];
  if (runs.length) lines.push(`  running ${runs.join(', ')}`);
  if (regrades.length) lines.push(`  re-grading ${regrades.join(', ')} ${colors.dim('(stored samples; no workflow runs, no model calls)')}`);
  if (!runs.length && !regrades.length) lines.push('  no suites to run');
  return `${lines.join('\n')}\n`;
}

/** Paths as the user knows them: relative to the root. */
export function relativeTo(root: string, files: Iterable<string>): string {
  return [...files].map((file) => path.relative(root, file) || file).join(', ');
}
