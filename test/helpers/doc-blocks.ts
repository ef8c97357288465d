import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * How the tests check one fenced code block of the docs, from the `<!-- doc-test: … -->` comment on the line
 * above it (HTML comments do not render, so readers never see them):
 * - `file <path>`: written to that path of the page's project, for the blocks after it;
 * - `script <path> [expect="<text>" …]`: written there, then run with node (TypeScript through tsx): exit 0,
 *   nothing on stderr, and each `<text>` in its output;
 * - `run [exit=<code>]`: shell commands, each run in the page's project (`rollout-test` and `npx rollout-test` are
 *   this checkout's CLI), each ending with that exit code (0 by default);
 * - `yaml`: parsed;
 * - `elsewhere <test file> …`: that test runs it (it must name this page);
 * - `shown <why>`: not something a reader pastes as is (an output, a fragment of a larger file, a placeholder
 *   host); the reason is required.
 */
export type DocTest =
  | { kind: 'file'; path: string }
  | { kind: 'script'; path: string; expect: string[] }
  | { kind: 'run'; exit: number }
  | { kind: 'yaml' }
  | { kind: 'elsewhere'; testFile: string }
  | { kind: 'shown'; why: string };

export interface DocBlock {
  page: string;
  line: number;
  lang: string;
  body: string;
  test: DocTest | undefined;
}

const FENCE = /^(\s*)(`{3,})(\S*)\s*$/;
const MARKER = /^\s*<!-- doc-test: (.*?) -->\s*$/;

/** The pages of the docs: README.md and every docs/*.md, as paths relative to the repository. */
export function docPages(repo: string): string[] {
  const docs = readdirSync(path.join(repo, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', ...docs.sort().map((name) => `docs/${name}`)];
}

/** Every fenced block of a page, its body unindented (blocks inside list items are indented). */
export function docBlocks(repo: string, page: string): DocBlock[] {
  const lines = readFileSync(path.join(repo, page), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open as unknown as [string, string, string, string];
    const close = lines.findIndex((line, j) => j > i && line.trim() === fence);
    if (close < 0) throw new Error(`${page}:${i + 1}: a code block that never closes`);
    const body = lines.slice(i + 1, close).map((line) => line.slice(Math.min(indent.length, line.length - line.trimStart().length)));
    blocks.push({ page, line: i + 1, lang, body: `${body.join('\n')}\n`, test: markerAbove(lines, i) });
    i = close;
  }
  return blocks;
}

function markerAbove(lines: string[], fenceIndex: number): DocTest | undefined {
  const above = MARKER.exec(lines[fenceIndex - 1] ?? '');
  return above ? parseDocTest(above[1]!) : undefined;
}

export function parseDocTest(text: string): DocTest {
  const [kind, first = '', ...rest] = text.split(' ');
  const options = (name: string) =>
    Array.from(text.matchAll(/(?:^| )(\w+)=(?:"([^"]*)"|(\S+))/g))
      .filter((m) => m[1] === name)
      .map((m) => m[2] ?? m[3]!);
  switch (kind) {
    case 'file':
      return { kind, path: first };
    case 'script':
      return { kind, path: first, expect: options('expect') };
    case 'run':
      return { kind, exit: Number(options('exit')[0] ?? 0) };
    case 'yaml':
      return { kind };
    case 'elsewhere':
      return { kind, testFile: first };
    case 'shown':
      return { kind, why: [first, ...rest].join(' ').trim() };
    default:
      throw new Error(`unknown doc-test marker "${text}"`);
  }
}

/** A `run` block's commands: comments and blank lines dropped, `\` continuations joined. */
export function shellCommands(body: string): string[] {
  return body
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '');
}
