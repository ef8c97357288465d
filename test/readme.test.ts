import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { expect, it } from 'vitest';
import { makeProject, REPO } from './helpers/project.ts';

it('runs the README embedding example as a reader would paste it', async () => {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const block = /<!-- readme-example[^>]*-->\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block).toBeDefined();
  const dir = makeProject({ 'example.mjs': block! });
  const run = await execa(process.execPath, ['example.mjs'], { cwd: dir, reject: false });
  expect(run.stderr).toBe('');
  expect(run.stdout).toContain('workflow: success echo: hi');
  expect(run.stdout).toContain('grader: success { reward: 1 }');
  expect(run.stdout).toContain("status: 'ok'");
  expect(run.exitCode).toBe(0);
});
