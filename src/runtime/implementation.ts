import { loadModule } from './load-module.ts';
import type { GraderSpec, WorkflowSpec } from './workflow.ts';

/** A `"module:export"` string broken into its parts. */
export interface ExportRef {
  module: string;
  exportName: string;
}

/** Splits `"module:export"` at its last colon; a missing part is a usage error that shows the expected form. */
export function parseExportRef(spec: string): ExportRef {
  const at = spec.lastIndexOf(':');
  const module = spec.slice(0, at);
  const exportName = spec.slice(at + 1);
  if (at <= 0 || !exportName || /^[a-zA-Z]$/.test(module)) {
    throw new Error(`"${spec}" is not a "module:export" reference; write e.g. "./rollouts/agent.ts:MyWorkflow"`);
  }
  return { module, exportName };
}

/** Imports the module of a `"module:export"` string and returns that export, with an error naming what is missing. */
export async function resolveExportRef(spec: string, cwd: string): Promise<unknown> {
  const { module, exportName } = parseExportRef(spec);
  let exports: Record<string, unknown>;
  try {
    exports = await loadModule(module, cwd);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot import module "${module}" (from "${spec}", resolved from ${cwd}): ${reason}`, {
      cause: error,
    });
  }
  if (!(exportName in exports) || exports[exportName] === undefined) {
    const names = Object.keys(exports).join(', ') || 'nothing';
    throw new Error(`module "${module}" has no export "${exportName}" (it exports: ${names})`);
  }
  return exports[exportName];
}

/** A workflow or grader in a form the runtime can call: a fresh instance's method, per rollout. */
export type Invoke<TCtx, TResult> = (config: unknown, ctx: TCtx) => Promise<TResult> | TResult;

// biome-ignore lint/complexity/noBannedTypes: what `typeof value === 'function'` narrows to
function isClass(value: Function): boolean {
  return /^class[\s{]/.test(Function.prototype.toString.call(value));
}

/**
 * Turns a class (instantiated per rollout with its config) or a plain function into one callable shape.
 * `method` is `run` for workflows and `grade` for graders.
 */
export function toInvoke<TCtx, TResult>(impl: unknown, method: 'run' | 'grade', what: string): Invoke<TCtx, TResult> {
  if (typeof impl !== 'function') {
    throw new TypeError(`${what} must be a class, a function or a "module:export" string, got ${typeof impl}`);
  }
  if (isClass(impl) || typeof impl.prototype?.[method] === 'function') {
    const Ctor = impl as new (config: unknown) => Record<string, (ctx: TCtx) => Promise<TResult> | TResult>;
    return (config, ctx) => {
      const instance = new Ctor(config);
      if (typeof instance[method] !== 'function') throw new TypeError(`${what} class has no ${method}() method`);
      return instance[method]!(ctx);
    };
  }
  const fn = impl as (ctx: TCtx) => Promise<TResult> | TResult;
  return (_config, ctx) => fn(ctx);
}

/** Resolves a spec (class, function or string) to its implementation. */
export async function resolveSpec(spec: WorkflowSpec | GraderSpec, cwd: string): Promise<unknown> {
  return typeof spec === 'string' ? resolveExportRef(spec, cwd) : spec;
}
