import path from 'node:path';
import { importProjectModule } from '../../runtime/suite-registry.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { GraderSpec, WorkflowSpec } from '../../runtime/workflow.ts';
import { suiteKey } from '../types/suite-key.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { refModule, suiteCodeRefs } from './export-refs.ts';
import { graderOnlyImports } from './grader-imports.ts';
import { type ImportGraph, importGraph, isIncomplete, reachable, resolvedImport } from './import-graph.ts';
import { backendEntry } from '../../backends/registry.ts';
import { isWithin } from '../../runtime/paths.ts';

/** What a change to a file means for a suite: run it again, or only grade its stored samples again. */
export type RerunMode = 'run' | 'regrade';

/** The files one suite depends on, split by what a change to them calls for. */
export interface SuiteDeps {
  key: string;
  file: string;
  name: string;
  /** Every local module the suite loads: the rollout file's imports, the workflow's, the grader's and its model script's. */
  modules: Set<string>;
  /** Modules reached from the grader's module and not from the workflow's: a change there only re-grades. */
  graderOnly: Set<string>;
  /** The dataset file, or the harbor task directory (anything under it counts). */
  data: string[];
  /** False when esbuild could not build the import graph (a module that does not parse): `modules` lack imports. */
  complete: boolean;
}

const IMPORTABLE = /\.[cm]?[jt]sx?$/;

/**
 * The module that defines a suite's workflow or grader: for a class, the module of the rollout file's graph
 * that exports it with the fewest imports of its own (a re-exporting index reaches the defining module, not
 * the other way round); the rollout file itself when the class is declared there and not exported elsewhere.
 */
async function definingModule(spec: WorkflowSpec | GraderSpec, file: string, graph: ImportGraph): Promise<string | undefined> {
  if (typeof spec === 'string') return refModule(spec, path.dirname(file));
  let best: { module: string; size: number } | undefined;
  for (const module of reachable(graph, [file])) {
    if (!IMPORTABLE.test(module)) continue;
    const exported = await importProjectModule(module).catch(() => ({}));
    if (!Object.values(exported).includes(spec)) continue;
    const size = reachable(graph, [module]).size;
    if (!best || size < best.size) best = { module, size };
  }
  return best?.module ?? file;
}

function dataOf(suite: RolloutSuite<any, any>, file: string): string[] {
  const dir = path.dirname(file);
  const data = typeof suite.dataset === 'string' ? [path.resolve(dir, suite.dataset)] : [];
  if (suite.backend) data.push(...backendEntry(suite.backend).inputs(suite.backend).map((p) => path.resolve(dir, p)));
  return data;
}

/**
 * What a workflow declared in the rollout file reaches: the file's imports, but for the modules it imports only
 * as a suite's `grader:` (see graderOnlyImports), which its workflows never run.
 */
function workflowGraph(graph: ImportGraph, file: string, graderImports: Set<string>): ImportGraph {
  const graderModules = new Set([...graderImports].map((specifier) => resolvedImport(graph, file, specifier)));
  return new Map([...graph, [file, (graph.get(file) ?? []).filter((m) => !graderModules.has(m))]]);
}

/**
 * `refs`: the local modules of the suite's `"module:export"` strings (see suiteCodeRefs), its model script's included;
 * `graderImports`: the specifiers the rollout file imports only as graders.
 */
async function depsOf(suite: RolloutSuite<any, any>, file: string, graph: ImportGraph, refs: string[], graderImports: Set<string>): Promise<SuiteDeps> {
  const workflowRoot = await definingModule(suite.workflow, file, graph);
  const graderRoot = suite.grader === undefined ? undefined : await definingModule(suite.grader, file, graph);
  const workflow = reachable(workflowRoot === file ? workflowGraph(graph, file, graderImports) : graph, workflowRoot ? [workflowRoot] : []);
  // A grader declared in the rollout file shares it with the suite's declaration: it counts as both.
  const grader = graderRoot && graderRoot !== file ? reachable(graph, [graderRoot]) : new Set<string>();
  const graderOnly = new Set([...grader].filter((m) => m !== file && !workflow.has(m)));
  // A scripted model (the suite's, else the config's) answers the workflow's calls: a change to it reruns the suite.
  const modules = new Set([...reachable(graph, [file]), ...workflow, ...grader, ...reachable(graph, refs)]);
  return { key: suiteKey(file, suite.name), file, name: suite.name, modules, graderOnly, data: dataOf(suite, file), complete: !isIncomplete(graph) };
}

/** The dependencies of each suite a rollout file declares, from one import graph of the file and its references (the config's model script included). */
export async function suiteDepsOf(file: string, suites: RolloutSuite<any, any>[], config: ResolvedConfig): Promise<SuiteDeps[]> {
  const refs = suites.map((suite) =>
    suiteCodeRefs(file, suite, config)
      .map(({ spec, dir }) => refModule(spec, dir))
      .filter((m): m is string => m !== undefined),
  );
  const [graph, graderImports] = await Promise.all([importGraph([...new Set([file, ...refs.flat()])], config.root, 'skip'), graderOnlyImports(file)]);
  return Promise.all(suites.map((suite, i) => depsOf(suite, file, graph, refs[i]!, graderImports)));
}

/** What a change to `changed` calls for in the suite: a run, a re-grade, or nothing (undefined). */
export function rerunModeFor(deps: SuiteDeps, changed: string): RerunMode | undefined {
  if (deps.data.some((data) => isWithin(changed, data))) return 'run';
  if (deps.graderOnly.has(changed)) return 'regrade';
  return deps.modules.has(changed) ? 'run' : undefined;
}
