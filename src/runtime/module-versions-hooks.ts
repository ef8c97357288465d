/**
 * Module customization hooks of watch mode; they run on Node's loader thread (see `module-versions.ts`).
 *
 * A project module that changed, and every project module that imports it (directly or not), gets a new
 * version: its next import resolves to `…?rollout-test-v=N`, a URL Node has not evaluated yet. Everything else
 * keeps the one copy already evaluated: packages (`node_modules`), rollout-test itself, unchanged project
 * modules. The import edges are learnt here, from the resolutions Node asks for, so they are the ones that ran.
 */
import type { MessagePort } from 'node:worker_threads';
import { CODE_URL } from '../package-files.ts';

/** The query parameter that names a module's version. */
export const VERSION_PARAM = 'rollout-test-v';

/** What `module.register` hands to {@link initialize}. */
export interface HooksData {
  port: MessagePort;
  /** The project's root as a file URL ending in `/`: only modules under it are versioned. */
  rootUrl: string;
}

/** Asks for new versions of the modules at these file URLs (no query) and of their importers. */
export interface InvalidateRequest {
  id: number;
  changed: string[];
}

/** The modules whose version changed, as `[file URL, version]`. */
export interface InvalidateReply {
  id: number;
  versions: Array<[string, number]>;
}

interface ResolveContext {
  parentURL?: string | undefined;
}
interface ResolveResult {
  url: string;
  [key: string]: unknown;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<ResolveResult>;

/** rollout-test's own modules (its `dist/` or `src/`): never versioned, whatever the project's root. */
const OWN_URL = CODE_URL;
const versions = new Map<string, number>();
/** Each project module → the project modules that import it. */
const importers = new Map<string, Set<string>>();
let rootUrl = '';
let generation = 0;

const withoutQuery = (url: string) => url.replace(/[?#].*$/s, '');
const isProjectModule = (url: string) => url.startsWith(rootUrl) && !url.startsWith(OWN_URL) && !url.includes('/node_modules/');

export function initialize(data: HooksData): void {
  rootUrl = data.rootUrl;
  data.port.on('message', ({ id, changed }: InvalidateRequest) => {
    data.port.postMessage({ id, versions: invalidate(changed) } satisfies InvalidateReply);
  });
  data.port.unref();
}

/** Gives the changed modules, and every module that reaches one of them through imports, the next version. */
function invalidate(changed: string[]): Array<[string, number]> {
  generation++;
  const bumped = new Map<string, number>();
  const stack = changed.filter(isProjectModule);
  for (let url = stack.pop(); url !== undefined; url = stack.pop()) {
    if (bumped.has(url)) continue;
    bumped.set(url, generation);
    versions.set(url, generation);
    stack.push(...(importers.get(url) ?? []));
  }
  return [...bumped];
}

export async function resolve(specifier: string, context: ResolveContext, nextResolve: NextResolve): Promise<ResolveResult> {
  const resolved = await nextResolve(specifier, context);
  const child = withoutQuery(resolved.url);
  if (!isProjectModule(child)) return resolved;
  const parent = context.parentURL && withoutQuery(context.parentURL);
  if (parent && isProjectModule(parent)) {
    let set = importers.get(child);
    if (!set) importers.set(child, (set = new Set()));
    set.add(parent);
  }
  const version = versions.get(child);
  if (!version || new URL(resolved.url).searchParams.has(VERSION_PARAM)) return resolved;
  const url = new URL(resolved.url);
  url.searchParams.set(VERSION_PARAM, String(version));
  return { ...resolved, url: url.href };
}
