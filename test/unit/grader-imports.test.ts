import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { graderOnlyImports } from '../../src/node/watch/grader-imports.ts';

const HEADER = `import { AgentWorkflow, defineRollout } from 'rollout-test';\n`;

async function graderOnly(source: string, name = 'x.rollout.ts'): Promise<string[]> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'grader-imports-')), name);
  writeFileSync(file, HEADER + source);
  return [...(await graderOnlyImports(file))];
}

const suite = (grader: string) => `defineRollout({ name: 's', dataset: [], workflow: A, grader: ${grader} });\n`;

it('names a module whose imported names are used only as a defineRollout grader', async () => {
  const source = `import { UnitGrader } from './grader.ts';\nimport type { T } from './types.ts';\nimport { helper } from './helper.ts';
class A extends AgentWorkflow { run(ctx: T) { return helper(ctx); } }\n${suite('UnitGrader')}`;
  expect(await graderOnly(source)).toEqual(['./grader.ts']);
  expect(await graderOnly(`import grader from './g.js';\nclass A {}\n${suite('grader').replace('grader: grader', 'grader')}`)).toEqual(['./g.js']);
});

it('leaves out a module whose names are used elsewhere, or that is loaded another way', async () => {
  const usedByWorkflow = `import { UnitGrader } from './grader.ts';\nclass A { run() { return new UnitGrader(); } }\n${suite('UnitGrader')}`;
  const otherName = `import { UnitGrader, expected } from './grader.ts';\nclass A { run() { return expected; } }\n${suite('UnitGrader')}`;
  const twice = `import { UnitGrader } from './grader.ts';\nimport './grader.ts';\nclass A {}\n${suite('UnitGrader')}`;
  const reexported = `import { UnitGrader } from './grader.ts';\nexport * from './grader.ts';\nclass A {}\n${suite('UnitGrader')}`;
  const nested = `import { UnitGrader } from './grader.ts';\nclass A {}\ndefineRollout({ name: 's', dataset: [], workflow: A, graderConfig: { grader: UnitGrader } });\n`;
  for (const source of [usedByWorkflow, otherName, twice, reexported, nested]) expect(await graderOnly(source), source).toEqual([]);
});

it('names nothing in a file that does not parse', async () => {
  expect(await graderOnly(`import { UnitGrader } from './grader.ts';\nclass A {\n${suite('UnitGrader')}`)).toEqual([]);
});
