import { chmod, cp, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TrialEnvironment } from '../environments/environment.ts';

/**
 * Uploads task folders (later ones over earlier ones, as Harbor merges a step's tests/ over the task's) to
 * `envPath`, with `script` made executable: Harbor `chmod +x`es its scripts and executes them, so a script's
 * shebang decides what runs it. The mode is set on a staged copy, so it holds where `envPath` is read-only.
 */
export async function uploadScripts(env: TrialEnvironment, dirs: string[], envPath: string, script: string): Promise<void> {
  const stage = await mkdtemp(path.join(os.tmpdir(), 'rollout-scripts-'));
  try {
    await chmod(stage, 0o755); // its mode becomes the uploaded folder's: any user must read it
    for (const dir of dirs) await cp(dir, stage, { recursive: true, force: true });
    const file = path.join(stage, script);
    if (await stat(file).then((info) => info.isFile(), () => false)) await chmod(file, 0o755);
    await env.upload(stage, envPath);
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}
