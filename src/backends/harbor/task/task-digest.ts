import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

const SINGLE_FILES = ['task.toml', 'instruction.md', 'README.md', 'trajectory.json'];
const TREES = ['environment', 'tests', 'solution', 'steps'];
/** Harbor's default ignores (its Packager's, used when a task has no .gitignore). */
const IGNORED = [/(^|\/)__pycache__\//, /\.pyc$/, /(^|\/)\.DS_Store$/, /\.sw[po]$/, /~$/];

async function filesUnder(root: string, dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

/**
 * A task's content digest as Harbor's Packager computes it (`lock.json`'s `task.digest`): the sorted files of
 * the task (task.toml, instruction.md, README.md, trajectory.json, and everything under environment/, tests/,
 * solution/ and steps/), each as `<path>\0<sha256 of its bytes>\n`, hashed with SHA-256. Unlike Harbor, a
 * task's own .gitignore is not read: the default ignores always apply.
 */
export async function taskDigest(taskDir: string): Promise<string> {
  const top = new Set((await readdir(taskDir, { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name));
  const singles = SINGLE_FILES.filter((name) => top.has(name));
  const trees = (await Promise.all(TREES.map((dir) => filesUnder(taskDir, dir)))).flat();
  const files = [...new Set([...singles, ...trees])].filter((file) => !IGNORED.some((pattern) => pattern.test(file))).sort();
  const outer = createHash('sha256');
  for (const file of files) {
    const inner = createHash('sha256').update(await readFile(path.join(taskDir, file))).digest('hex');
    outer.update(`${file}\0${inner}\n`);
  }
  return outer.digest('hex');
}
