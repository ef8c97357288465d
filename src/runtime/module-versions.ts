import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { ownModuleUrl } from '../package-files.ts';
import { registerTypeScriptLoader } from './load-module.ts';
import { type HooksData, type InvalidateReply, type InvalidateRequest, VERSION_PARAM } from './module-versions-hooks.ts';

/** Built, the hooks are their own entry of dist/; from the sources (tsx registered), TypeScript. */
const HOOKS_URL = ownModuleUrl('runtime/module-versions-hooks');

let channel: { port: MessagePort; nextId: number; replies: Map<number, (reply: InvalidateReply) => void> } | undefined;
/** The current version of each project module that changed since tracking began (a mirror of the hooks'). */
const versions = new Map<string, number>();

/**
 * Makes this thread's imports of project modules (under `root`) versioned, for watch mode: after
 * {@link invalidateModules}, the changed modules and their importers are evaluated anew, and nothing else is.
 * Packages and rollout-test itself stay evaluated once. Idempotent; the first `root` stays.
 */
export async function trackModuleVersions(root: string): Promise<void> {
  if (channel) return;
  // The TypeScript loader first: hooks registered later run first, so these see the URL it resolved to.
  await registerTypeScriptLoader();
  const { port1, port2 } = new MessageChannel();
  const rootUrl = pathToFileURL(root.endsWith(path.sep) ? root : root + path.sep).href;
  register(HOOKS_URL, { data: { port: port2, rootUrl } satisfies HooksData, transferList: [port2] });
  channel = { port: port1, nextId: 1, replies: new Map() };
  const { replies } = channel;
  port1.on('message', (reply: InvalidateReply) => {
    replies.get(reply.id)?.(reply);
    replies.delete(reply.id);
  });
  port1.unref();
}

/**
 * Gives the modules at these paths, and every project module that imports them, a new version: their next
 * import evaluates them anew. Resolves with the paths whose version changed. Without tracking, a no-op.
 */
export async function invalidateModules(paths: Iterable<string>): Promise<string[]> {
  if (!channel) return [];
  const request: InvalidateRequest = { id: channel.nextId++, changed: [...paths].map((file) => pathToFileURL(file).href) };
  const reply = await new Promise<InvalidateReply>((resolve) => {
    channel!.replies.set(request.id, resolve);
    channel!.port.postMessage(request);
  });
  const changed = reply.versions.map(([url, version]) => {
    const file = fileURLToPath(url);
    versions.set(file, version);
    return file;
  });
  return changed;
}

/** The version of the module at `file`: 0 until it changes. */
export function moduleVersion(file: string): number {
  return versions.get(file) ?? 0;
}

/** `file` as a specifier of its current version, for {@link loadModule}. */
export function versionedSpecifier(file: string): string {
  const version = moduleVersion(file);
  return version ? `${file}?${VERSION_PARAM}=${version}` : file;
}
