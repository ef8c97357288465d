// The tinypool entry. Worker threads ignore loader flags given through execArgv on Node 20, so when the
// package runs from its TypeScript sources (its own tests) the TypeScript loader is registered here first.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('./worker.js', import.meta.url);
const fromSources = !existsSync(fileURLToPath(built));
if (fromSources) (await import('tsx/esm/api')).register();
const runtime = await import(fromSources ? new URL('./worker.ts', import.meta.url).href : built.href);

export const runTask = runtime.runTask;
export const preload = runtime.preload;
export const runSession = runtime.runSession;
