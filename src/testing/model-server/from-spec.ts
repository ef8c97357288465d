import { resolveExportRef } from '../../runtime/implementation.ts';
import { type ModelServer, type ModelServerOptions, startModelServer } from './server.ts';
import type { ModelScript } from './types.ts';

/**
 * Starts a scripted server from a `"module:export"` reference to a {@link ModelScript}, resolved from `cwd` (a
 * suite that names a script and no endpoint). Built-in scripts are reachable as `"rollout-test/testing:calculatorScript"`.
 */
export async function startModelServerFromSpec(
  spec: string,
  cwd: string,
  options: Omit<ModelServerOptions, 'script'> = {},
): Promise<ModelServer> {
  const script = await resolveExportRef(spec, cwd);
  if (typeof script !== 'function') {
    throw new TypeError(`model script "${spec}" must export a function (request) => reply, got ${typeof script}`);
  }
  return startModelServer({ ...options, script: script as ModelScript });
}
