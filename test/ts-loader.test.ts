/**
 * rollout-test's TypeScript loader, through the real CLI on real files: the imports TypeScript allows, ES module and
 * CommonJS packages, and the transform cache under the project's `node_modules/.cache/rollout-test/ts`.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';

/** A rollout whose answer is what `./agent.js` (agent.ts) says, graded against the label. */
const ROLLOUT = `import { AgentWorkflow, defineRollout, Grader } from 'rollout-test';
import { answer } from './agent.js';
class Agent extends AgentWorkflow {
  async run(ctx: { prompt: { role: string; content: string }[] }) {
    return [...ctx.prompt, { role: 'assistant', content: answer() }];
  }
}
class Exact extends Grader {
  grade(ctx: { sample: { messages: { content: string }[] }; label: string }): number {
    return ctx.sample.messages.at(-1)!.content === ctx.label ? 1 : 0;
  }
}
defineRollout({ name: 'answers', dataset: [{ prompt: 'q', label: 'fresh' }], workflow: Agent, grader: Exact });
`;
const agent = (text: string) => `export const answer = (): string => ${JSON.stringify(text)};\n`;

const cacheDir = (dir: string) => path.join(dir, 'node_modules/.cache/rollout-test/ts');
const entries = (dir: string) => readdirSync(cacheDir(dir)).sort();
/** The one cache entry whose transform holds `code`. */
function entryWith(dir: string, code: string): string {
  const named = entries(dir).filter((name) => readFileSync(path.join(cacheDir(dir), name), 'utf8').includes(code));
  expect(named).toHaveLength(1);
  return path.join(cacheDir(dir), named[0]!);
}
/** An entry as the cache writes it: the hash of the body, then the body. */
const entryText = (body: string) => `//rollout-test-ts:${createHash('sha256').update(body).digest('hex')}\n${body}`;

async function counts(dir: string) {
  const run = await runCli(dir, ['--reporter', 'json']);
  expect(run.stderr).toBe('');
  return JSON.parse(String(run.stdout)).overall.counts as { total: number; passed: number; failed: number };
}

describe('the TypeScript loader', () => {
  it('resolves the imports TypeScript allows, in ES module and CommonJS packages', async () => {
    const dir = makeProject({
      'all.rollout.ts': `import { AgentWorkflow, defineRollout } from 'rollout-test';
import { a } from './esm/a.js';
import { b } from './esm/b';
import { c } from './esm/dir';
import legacy from './esm/legacy.cjs';
import old from './cjs/old.ts';
import { m } from './cjs/m.mjs';
import { view } from './esm/view.jsx';
import { u } from '@app/u';
class Agent extends AgentWorkflow {
  async run(ctx: { prompt: { role: string; content: string }[] }) {
    const content = [a, b, c, legacy.l, old.default.o, m, view, u, old.default.u].join(' ');
    return [...ctx.prompt, { role: 'assistant', content }];
  }
}
defineRollout({ name: 'all', dataset: [{ prompt: 'q', label: 'a b c l o m view u u' }], workflow: Agent, grader: (ctx) => (ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0) });
`,
      // tsconfig.json (JSON with comments, as TypeScript reads it): its aliases, for an import and a require, and
      // its compiler options (JSX through \`h\`).
      'tsconfig.json': `{\n  // aliases\n  "compilerOptions": { "jsxFactory": "h", "baseUrl": ".", "paths": { "@app/*": ["lib/*"] } },\n}\n`,
      'lib/u.ts': `export const u: string = 'u';\n`,
      'esm/a.ts': `export const a: string = 'a';\n`,
      'esm/b.ts': `export const b: string = 'b';\n`,
      'esm/dir/index.ts': `export const c: string = 'c';\n`,
      // CommonJS in an ES module package: .cts, whose require finds a .ts file by its .js name.
      'esm/legacy.cts': `const { l } = require('./l.js');\nmodule.exports = { l: l as string };\n`,
      'esm/l.ts': `export const l = 'l';\n`,
      'esm/view.tsx': `const h = (tag: (p: { children: string }) => string, _: null, children: string) => tag({ children });\nconst Tag = (p: { children: string }) => p.children;\nexport const view: string = <Tag>view</Tag>;\n`,
      // A CommonJS package: its .ts files are CommonJS (extensionless requires too), its .mts an ES module. As with tsx,
      // an ES module imports a CommonJS file's \`exports\` as its default: \`{ default: … }\` here.
      'cjs/package.json': JSON.stringify({ name: 'old', private: true }),
      'cjs/old.ts': `import { o } from './o';\nimport { u } from '@app/u';\nexport default { o, u, dirname: __dirname };\n`,
      'cjs/o.ts': `export const o: string = 'o';\n`,
      'cjs/m.mts': `export const m: string = typeof require === 'undefined' ? 'm' : 'not an ES module';\n`,
    });
    expect(await counts(dir)).toMatchObject({ total: 1, passed: 1 });
  });

  it('transforms on a miss, then serves the transform from the cache, and anew once the file changed', async () => {
    const dir = makeProject({ 'a.rollout.ts': ROLLOUT, 'agent.ts': agent('fresh') });
    expect(await counts(dir)).toMatchObject({ passed: 1 });
    const written = entries(dir);
    expect(written).toHaveLength(2);
    // A hit is read, not made: an entry changed behind the loader's back (a valid one) is what runs.
    const entry = entryWith(dir, 'const answer');
    writeFileSync(entry, entryText(`export const answer = () => 'from the cache';\n`));
    expect(await counts(dir)).toMatchObject({ passed: 0, failed: 1 });
    // A changed file has another key: it is transformed anew, and its old entry is not used.
    writeFileSync(path.join(dir, 'agent.ts'), agent('fresh').replace('(): string', '()'));
    expect(await counts(dir)).toMatchObject({ passed: 1 });
    expect(entries(dir)).toHaveLength(3);
  });

  it('ignores a damaged entry and writes it anew', async () => {
    const dir = makeProject({ 'a.rollout.ts': ROLLOUT, 'agent.ts': agent('fresh') });
    expect(await counts(dir)).toMatchObject({ passed: 1 });
    const entry = entryWith(dir, 'const answer');
    const intact = readFileSync(entry, 'utf8');
    for (const damaged of [intact.slice(0, intact.length / 2), `${intact.split('\n')[0]}\nexport const answer = () => 'damaged';\n`, '']) {
      writeFileSync(entry, damaged);
      expect(await counts(dir)).toMatchObject({ passed: 1 });
      expect(readFileSync(entry, 'utf8')).toBe(intact);
    }
  });

  it('keeps whole entries when runs write the same ones at once', async () => {
    const dir = makeProject({ 'a.rollout.ts': ROLLOUT, 'agent.ts': agent('fresh') });
    const runs = await Promise.all([1, 2, 3].map(() => counts(dir)));
    for (const run of runs) expect(run).toMatchObject({ passed: 1 });
    const names = entries(dir);
    expect(names).toHaveLength(2);
    for (const name of names) {
      const text = readFileSync(path.join(cacheDir(dir), name), 'utf8');
      expect(text).toBe(entryText(text.slice(text.indexOf('\n') + 1)));
    }
  });

  it('names the TypeScript line of a failure, through the transform\'s source map', async () => {
    const dir = makeProject({
      'a.rollout.ts': ROLLOUT.replace("import { answer } from './agent.js';", "import { answer } from './agent.js';\ninterface Unused {\n  x: number;\n}"),
      'agent.ts': `type Text = string;\n\nexport const answer = (): Text => {\n  throw new Error('no answer');\n};\n`,
    });
    const run = await runCli(dir, ['--reporter', 'json']);
    expect(String(run.stdout)).toMatch(/agent\.ts:4:9/);
  });
});
