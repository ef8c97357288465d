import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options } from 'execa';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(REPO, 'bin/rollout-test.js');

/**
 * A project in a temporary directory, laid out as a user's would be: its files, and `rollout-test`
 * installed (linked to this checkout, whose `dist/` the test setup built).
 */
export function makeProject(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-project-'));
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(REPO, path.join(dir, 'node_modules', 'rollout-test'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'user-project', type: 'module', private: true }));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** Runs the real CLI as CI would (plain output), and never throws on a non-zero exit. */
export function runCli(cwd: string, args: string[], options: Options = {}) {
  return execa(process.execPath, [BIN, ...args], {
    cwd,
    reject: false,
    all: true,
    // execa would follow a SIGTERM with a SIGKILL 5 s later: a hidden time limit on a graceful stop, which a loaded
    // machine misses (a prewarmed Docker run removing its containers did, in CI).
    forceKillAfterDelay: false,
    ...options,
    env: { CI: 'true', NO_COLOR: '1', ...options.env },
  });
}

/** A rollout file header: imports and a workflow/grader pair driven by the row's metadata. */
export const COMMON = `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

export class Echo extends AgentWorkflow {
  async run(ctx) {
    const delay = Number(ctx.metadata.delayMs ?? 0);
    if (delay) await new Promise((r) => setTimeout(r, delay));
    if (ctx.metadata.fail) throw new Error(String(ctx.metadata.fail));
    return [...ctx.prompt, { role: 'assistant', content: String(ctx.prompt.at(-1).content) }];
  }
}

export class Exact extends Grader {
  grade(ctx) {
    return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
  }
}
`;
