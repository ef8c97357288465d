import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CODE_URL } from '../../src/package-files.ts';
import { toolsOwn } from '../../src/node/run/unhandled-errors.ts';

const stack = (...frames: string[]) => ['Error: boom', ...frames.map((frame) => `    at ${frame}`)].join('\n');
const ownUrl = `fn (${CODE_URL}node/run/runner.ts:10:5)`;
const ownPath = `${fileURLToPath(CODE_URL)}node/run/runner.ts:3:1`;
const timers = 'listOnTimeout (node:internal/timers:581:17)';

describe('toolsOwn: an error outside any rollout is rollout-test\'s own defect only when nothing else is on its stack', () => {
  it('is its own with only its code and Node\'s frames', () => {
    expect(toolsOwn(stack(ownUrl, timers))).toBe(true);
    expect(toolsOwn(stack(`async ${ownUrl}`, ownPath))).toBe(true);
  });

  it('is the run\'s unhandled error with a frame of the user\'s code or another package, or no frame of its own', () => {
    expect(toolsOwn(stack('Timeout._onTimeout (/tmp/p/a.rollout.ts:6:26)', ownUrl, timers))).toBe(false);
    expect(toolsOwn(stack('Socket.emit (file:///tmp/p/node_modules/openai/core.mjs:1:1)', ownUrl))).toBe(false);
    expect(toolsOwn(stack(timers))).toBe(false);
    expect(toolsOwn(undefined)).toBe(false);
  });
});

describe('toolsOwn on frames that name no file', () => {
  it('counts them as nobody\'s: built-ins beside its own frames leave the stack its own', () => {
    expect(toolsOwn(stack('Array.map (<anonymous>)', ownUrl, 'async Promise.all (index 0)', timers))).toBe(true);
    expect(toolsOwn('uncaught exception outside any rollout: a thrown string')).toBe(false);
  });
});

describe('toolsOwn built and from its sources', () => {
  it('counts frames of dist/ and of src/ (source-mapped) alike as its own', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    expect(toolsOwn(stack(`f (file://${root}dist/chunks/chunk-X.js:1:1)`, `g (${root}src/node/run/runner.ts:2:2)`, timers))).toBe(true);
  });
});
