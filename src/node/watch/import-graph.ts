import path from 'node:path';
import { build, transform } from 'esbuild';

/** Local import edges: each module's absolute path → the local modules it imports, statically or dynamically. */
export type ImportGraph = Map<string, string[]>;

/** Graphs esbuild could not build (see importGraph): their entries only. */
const incomplete = new WeakSet<ImportGraph>();

/** Whether esbuild could not build `graph`, which then holds its entries without their imports. */
export const isIncomplete = (graph: ImportGraph): boolean => incomplete.has(graph);

/** Inputs esbuild names with a namespace (`<stdin>`, `dataurl:…`) are not files. */
const NOT_A_FILE = /^(<|[\w-]+:)/;

/**
 * The local modules that `entries` reach, with their edges, as esbuild resolves them: the same transform
 * tsx applies at run time, so TypeScript's `./x.js` finds `x.ts` and type-only imports are no edges.
 * Packages are left out, since edits happen in the project. A module that does not parse (mid-edit) leaves
 * just the entries, without edges; its next save builds the graph again.
 */
export async function importGraph(entries: string[], cwd: string): Promise<ImportGraph> {
  const graph: ImportGraph = new Map(entries.map((entry) => [entry, []]));
  try {
    const { metafile } = await build({
      entryPoints: entries,
      absWorkingDir: cwd,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
      outdir: 'out',
    });
    for (const [input, { imports }] of Object.entries(metafile.inputs)) {
      if (NOT_A_FILE.test(input)) continue;
      const local = imports.filter((i) => !i.external && !NOT_A_FILE.test(i.path));
      graph.set(path.resolve(cwd, input), local.map((i) => path.resolve(cwd, i.path)));
    }
  } catch {
    // A syntax error or an unresolved import: the load that follows reports it to the user.
    incomplete.add(graph);
  }
  return graph;
}

/**
 * Starts esbuild's service process, which the first importGraph would otherwise start: a caller that knows a
 * graph is coming (a queued run, while it connects to Redis) takes that off the graph's path.
 */
export function startImportGraphs(): void {
  transform('').catch(() => undefined);
}

/** Every module reachable from `roots`, the roots included. */
export function reachable(graph: ImportGraph, roots: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(graph.get(next) ?? []));
  }
  return seen;
}
