import path from 'node:path';
import type { BuildFailure, Metafile, Plugin, TransformOptions, TransformResult } from 'esbuild';
import { ownEsbuild } from '../../runtime/esbuild.ts';
import { computedImports } from './computed-imports.ts';
import { externalPackages, type PackageImports, type PackageRef, packageImports } from './package-imports.ts';

/**
 * What a graph does with packages: `identify` (what a queue's code hash needs) follows a linked package's modules,
 * names each installed one by version and notes imports named at run time; `skip` leaves every package out, as
 * watch mode needs (edits happen in the project's own files), and costs a save less.
 */
export type PackageMode = 'identify' | 'skip';

/** Local import edges: each module's absolute path → the local modules it imports, statically or dynamically. */
export type ImportGraph = Map<string, string[]>;

/** What a graph holds besides its edges. */
interface GraphNotes {
  /** Why esbuild could not build the graph (see importGraph); the graph then holds its entries only. */
  failure?: string;
  /** Each module's imports of installed packages. */
  packages: PackageImports;
  /** Modules with an `import()` of a module named at run time, which no graph can follow. */
  computed: Set<string>;
  /** Each module's local imports: the specifier as written → the module it resolved to. */
  specifiers: Map<string, Map<string, string>>;
}

const notes = new WeakMap<ImportGraph, GraphNotes>();
type Esbuild = typeof import('esbuild');
/** The graphs' own copy of esbuild (see ownEsbuild): its service is stopped between graphs, when nothing of this module awaits it. */
let graphEsbuild: Esbuild | undefined;
const graphs = () => (graphEsbuild ??= ownEsbuild());
let workOnService = 0;
let serviceKept = false;
const notesOf = (graph: ImportGraph): GraphNotes => notes.get(graph) ?? { packages: new Map(), computed: new Set(), specifiers: new Map() };

/** Whether esbuild could not build `graph`, which then holds its entries without their imports. */
export const isIncomplete = (graph: ImportGraph): boolean => notesOf(graph).failure !== undefined;

/** The installed packages that `modules` (of the graph) import. */
export const packagesOf = (graph: ImportGraph, modules: Iterable<string>): PackageRef[] => [...modules].flatMap((m) => notesOf(graph).packages.get(m) ?? []);

/** The local module that `specifier`, as written in `module`, resolved to (esbuild's resolution: `./x.js` finds `x.ts`). */
export const resolvedImport = (graph: ImportGraph, module: string, specifier: string): string | undefined =>
  notesOf(graph).specifiers.get(module)?.get(specifier);

/**
 * What the graph could not follow among `modules`, for the user: esbuild's error, or the modules that import a
 * module named at run time (relative to `root`).
 */
export function unfollowed(graph: ImportGraph, modules: Iterable<string>, root: string): string[] {
  const { failure, computed } = notesOf(graph);
  if (failure !== undefined) return [`its imports could not be followed (${failure})`];
  const relative = [...modules].filter((m) => computed.has(m)).map((m) => path.relative(root, m));
  return relative.map((m) => `${m} imports a module named at run time`);
}

/** Inputs esbuild names with a namespace (`<stdin>`, `dataurl:…`) are not files. */
const NOT_A_FILE = /^(<|[\w-]+:)/;

/** A glob esbuild made of `import(\`./dir/${x}.ts\`)` (`./dir/**\/*.ts`), as a regular expression over absolute paths. */
function globPattern(glob: string): RegExp {
  const parts = glob.split(/(\*\*\/|\*)/).map((part) => (part === '**/' ? '(?:.*/)?' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${parts.join('')}$`);
}

/**
 * The edges of the metafile's inputs. esbuild bundles the files a template-literal `import()` may name (a glob)
 * and lists them as inputs, but its importer's entry names the glob only: the edges go to the inputs it matches.
 */
function edgesOf(metafile: Metafile, cwd: string, specifiers: GraphNotes['specifiers']): ImportGraph {
  const inputs = Object.keys(metafile.inputs).filter((input) => !NOT_A_FILE.test(input)).map((input) => path.resolve(cwd, input));
  const graph: ImportGraph = new Map();
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    if (NOT_A_FILE.test(input)) continue;
    const file = path.resolve(cwd, input);
    const globs = imports.filter((i) => i.path.includes('*')).map((i) => globPattern(path.resolve(path.dirname(file), i.path)));
    const localImports = imports.filter((i) => !i.external && !NOT_A_FILE.test(i.path));
    specifiers.set(file, new Map(localImports.flatMap((i) => (i.original === undefined ? [] : [[i.original, path.resolve(cwd, i.path)]]))));
    const local = localImports.map((i) => path.resolve(cwd, i.path));
    graph.set(file, [...local, ...inputs.filter((m) => m !== file && globs.some((glob) => glob.test(m)))]);
  }
  return graph;
}

const failureText = (error: unknown): string => {
  const [first] = (error as Partial<BuildFailure>).errors ?? [];
  if (!first) return (error as Error).message;
  return first.location ? `${first.location.file}:${first.location.line}: ${first.text}` : first.text;
};

/** esbuild's bundle of `entries`: packages external, unless `plugins` decide what each bare import is. */
function bundle(entries: string[], cwd: string, plugins?: Plugin[]) {
  return onLiveService((esbuild) => esbuild.build({
    entryPoints: entries,
    absWorkingDir: cwd,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    ...(plugins ? { plugins } : { packages: 'external' as const }),
    logLevel: 'silent',
    outdir: 'out',
  }));
}

/**
 * The local modules that `entries` reach, with their edges, as esbuild resolves them: the same transform
 * tsx applies at run time, so TypeScript's `./x.js` finds `x.ts` and type-only imports are no edges.
 * Installed packages are left out, named by version (see externalPackages); a workspace package is followed.
 * A module that does not parse (mid-edit) leaves just the entries, without edges; its next save builds the
 * graph again.
 */
export function importGraph(entries: string[], cwd: string, packages: PackageMode = 'identify'): Promise<ImportGraph> {
  return onGraphService(() => buildGraph(entries, cwd, packages));
}

/**
 * esbuild's transform of TypeScript to JavaScript on the graphs' service, which watch mode keeps: a service of its
 * own would be one more esbuild process (12-17 MB) for the watching process's whole life.
 */
export function transformOnGraphService(source: string, options: TransformOptions): Promise<TransformResult> {
  return onGraphService(() => onLiveService((esbuild) => esbuild.transform(source, options)));
}

/** What esbuild says of a call on a service whose process ended under it (a signal, the out-of-memory killer). */
const DEAD_SERVICE = /^The service (is no longer running|was stopped)/;

/**
 * Makes `call` on the graphs' copy of esbuild, or, when that copy's service process has died, on a new copy, once:
 * a dead service fails every later call, and watch mode, which keeps it, would never build a graph again. (A stop of
 * our own never fails a call: a stopped service's calls in flight never settle, which is why nothing stops it then.)
 */
async function onLiveService<T>(call: (esbuild: Esbuild) => Promise<T>): Promise<T> {
  const copy = graphs();
  try {
    return await call(copy);
  } catch (error) {
    if (!DEAD_SERVICE.test((error as Error | undefined)?.message ?? '')) throw error;
    // Calls that failed together replace the dead copy once: a second new one would keep a service no one stops.
    if (graphEsbuild === copy) graphEsbuild = ownEsbuild();
    return call(graphs());
  }
}

/** Runs `work` on the graphs' service, which stops once no work is left on it, unless it is kept. */
async function onGraphService<T>(work: () => Promise<T>): Promise<T> {
  workOnService++;
  try {
    return await work();
  } finally {
    if (--workOnService === 0 && !serviceKept) void graphs().stop();
  }
}

async function buildGraph(entries: string[], cwd: string, packages: PackageMode): Promise<ImportGraph> {
  const found: GraphNotes = { packages: new Map(), computed: new Set(), specifiers: new Map() };
  let graph: ImportGraph = new Map(entries.map((entry) => [entry, []]));
  try {
    let { metafile, outputFiles } = await bundle(entries, cwd);
    if (packages === 'identify') {
      const external = await externalPackages(metafile, cwd);
      // A bare import that may be the project's code (linked, or in no node_modules) is followed through the plugin,
      // whose calls wait for this thread's turns: only then.
      if (external) found.packages = external;
      else ({ metafile, outputFiles } = await bundle(entries, cwd, [packageImports(found.packages)]));
      const inputs = new Set(Object.keys(metafile.inputs));
      for (const output of outputFiles) for (const input of computedImports(output.text, inputs)) found.computed.add(path.resolve(cwd, input));
    }
    graph = new Map([...graph, ...edgesOf(metafile, cwd, found.specifiers)]);
  } catch (error) {
    // A syntax error or an unresolved import: the load that follows reports it to the user.
    found.failure = failureText(error);
  }
  notes.set(graph, found);
  return graph;
}

/**
 * Starts esbuild's service process, which the first importGraph would otherwise start: a caller that knows a
 * graph is coming (a queued run, while it connects its queues) takes that off the graph's path. Only for one: the
 * service stops when a graph or transform ends, and one started with neither after it stays until the process ends.
 */
export function startImportGraphs(): void {
  graphs().transform('').catch(() => undefined);
}

/**
 * Keeps esbuild's service process between graphs, for a process that builds one per save (watch mode): a restart
 * costs ~12 ms. Otherwise it stops once no graph is being built, rather than hold its ~12 MB until the process ends
 * (a run needs graphs only as its suites start; the next graph starts it again).
 */
export function keepImportGraphService(): void {
  serviceKept = true;
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
