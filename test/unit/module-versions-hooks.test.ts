import { once } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { initialize, type InvalidateReply, resolve } from '../../src/runtime/module-versions-hooks.ts';

const ROOT = 'file:///project/';
const OWN = new URL('../../src/', import.meta.url).href;
const { port1, port2 } = new MessageChannel();
initialize({ port: port2, rootUrl: ROOT });

/** Resolves `child` imported from `parent` as Node would have before the hook (the specifier is the URL). */
const resolveFrom = async (child: string, parent?: string) => (await resolve(child, { parentURL: parent }, async (url) => ({ url }))).url;

async function invalidate(...changed: string[]): Promise<Record<string, number>> {
  port1.postMessage({ id: 1, changed });
  const [reply] = (await once(port1, 'message')) as [InvalidateReply];
  return Object.fromEntries(reply.versions);
}

describe('the module hooks of watch mode', () => {
  afterAll(() => port1.close());

  it('gives a changed module and its importers, transitively, a new URL; nothing else', async () => {
    // rollout → agent → util; rollout → a package; other → util. The package imports nothing of the project.
    await resolveFrom(`${ROOT}a.rollout.ts`, `${OWN}runtime/load-module.ts`);
    await resolveFrom(`${ROOT}agent.ts`, `${ROOT}a.rollout.ts`);
    await resolveFrom(`${ROOT}util.ts`, `${ROOT}agent.ts`);
    await resolveFrom(`${ROOT}node_modules/pkg/index.js`, `${ROOT}a.rollout.ts`);
    await resolveFrom(`${ROOT}util.ts`, `${ROOT}other.ts`);
    await resolveFrom(`${ROOT}lonely.ts`, `${ROOT}a.rollout.ts`);

    expect(await invalidate(`${ROOT}util.ts`)).toEqual({ [`${ROOT}util.ts`]: 1, [`${ROOT}agent.ts`]: 1, [`${ROOT}a.rollout.ts`]: 1, [`${ROOT}other.ts`]: 1 });
    expect(await resolveFrom(`${ROOT}agent.ts`, `${ROOT}a.rollout.ts?rollout-test-v=1`)).toBe(`${ROOT}agent.ts?rollout-test-v=1`);
    expect(await resolveFrom(`${ROOT}lonely.ts`, `${ROOT}a.rollout.ts?rollout-test-v=1`)).toBe(`${ROOT}lonely.ts`);
    expect(await resolveFrom(`${ROOT}node_modules/pkg/index.js`, `${ROOT}a.rollout.ts?rollout-test-v=1`)).toBe(`${ROOT}node_modules/pkg/index.js`);
  });

  it('never versions packages, rollout-test itself or files outside the project', async () => {
    expect(await invalidate(`${ROOT}node_modules/pkg/index.js`, `${OWN}index.ts`, 'file:///elsewhere/x.ts')).toEqual({});
  });

  it('keeps a version the importer asked for', async () => {
    expect(await invalidate(`${ROOT}agent.ts`)).toEqual({ [`${ROOT}agent.ts`]: 3, [`${ROOT}a.rollout.ts`]: 3 });
    expect(await resolveFrom(`${ROOT}agent.ts?rollout-test-v=1`, `${ROOT}a.rollout.ts?rollout-test-v=3`)).toBe(`${ROOT}agent.ts?rollout-test-v=1`);
    expect(await resolveFrom(`${ROOT}agent.ts`, `${ROOT}a.rollout.ts?rollout-test-v=3`)).toBe(`${ROOT}agent.ts?rollout-test-v=3`);
  });
});
