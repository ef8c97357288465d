import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type DocBlock, docBlocks, docPages, shellCommands } from './helpers/doc-blocks.ts';
import { BIN, makeProject, REPO } from './helpers/project.ts';

const TSX = path.join(REPO, 'node_modules/.bin/tsx');
const pages = docPages(REPO);

/** The README's minimal rollout file: every page's project starts with it, so a page's commands have a suite to run. */
function helloRollout(): string {
  const block = docBlocks(REPO, 'README.md').find((b) => b.test?.kind === 'elsewhere' && b.lang === 'ts');
  if (!block) throw new Error('README.md has no minimal rollout file');
  return block.body;
}

/** `rollout-test …` and `npx rollout-test …` as this checkout's CLI, as an installed package's bin would be. */
const asCli = (command: string) => command.replace(/^(npx )?rollout-test\b/, `"${process.execPath}" "${BIN}"`);

async function check(block: DocBlock, project: string): Promise<void> {
  const where = `${block.page}:${block.line}`;
  const test = block.test!;
  if (test.kind === 'file' || test.kind === 'script') {
    mkdirSync(path.dirname(path.join(project, test.path)), { recursive: true });
    writeFileSync(path.join(project, test.path), block.body);
  }
  if (test.kind === 'script') {
    const [command, args] = test.path.endsWith('.ts') ? [TSX, [test.path]] : [process.execPath, [test.path]];
    const run = await execa(command, args, { cwd: project, reject: false, all: true, env: { CI: 'true', NO_COLOR: '1' } });
    expect(run.exitCode, `${where}\n${run.all}`).toBe(0);
    expect(run.stderr, where).toBe('');
    for (const text of test.expect) expect(run.stdout, where).toContain(text);
  }
  if (test.kind === 'run') {
    for (const command of shellCommands(block.body)) {
      const run = await execa('sh', ['-c', asCli(command)], { cwd: project, reject: false, all: true, env: { CI: 'true', NO_COLOR: '1' } });
      expect(run.exitCode, `${where}: ${command}\n${run.all}`).toBe(test.exit);
    }
  }
  if (test.kind === 'yaml') expect(() => parseYaml(block.body), where).not.toThrow();
  if (test.kind === 'elsewhere') {
    const testFile = path.join(REPO, test.testFile);
    expect(existsSync(testFile), `${where}: ${test.testFile}`).toBe(true);
    expect(readFileSync(testFile, 'utf8'), `${where}: ${test.testFile} must name ${block.page}`).toContain(block.page);
  }
}

describe('the docs', () => {
  it('say of every code block how the tests check it', () => {
    const blocks = pages.flatMap((page) => docBlocks(REPO, page));
    expect(blocks.length).toBeGreaterThan(20);
    const unmarked = blocks.filter((b) => b.test === undefined).map((b) => `${b.page}:${b.line}`);
    expect(unmarked).toEqual([]);
    const shownWithoutWhy = blocks.filter((b) => b.test?.kind === 'shown' && b.test.why === '').map((b) => `${b.page}:${b.line}`);
    expect(shownWithoutWhy).toEqual([]);
  });

  // Each page's blocks run in order in a project of their own, as a reader pasting them one after another would.
  it.each(pages)('%s: every block a reader would paste runs as the page says', { timeout: 180_000 }, async (page) => {
    const project = makeProject({ 'hello.rollout.ts': helloRollout() });
    for (const block of docBlocks(REPO, page).filter((b) => b.test !== undefined)) await check(block, project);
  });
});
