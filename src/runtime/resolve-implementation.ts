import path from 'node:path';
import { resolveSpec, toInvoke, type Invoke } from './implementation.ts';
import type { ImplementationRef } from './protocol.ts';
import { loadSuites } from './suite-registry.ts';

/** Finds the workflow or grader that a reference names, ready to call. */
export async function resolveImplementation(
  ref: ImplementationRef,
  role: 'workflow' | 'grader',
  cwd: string,
): Promise<Invoke<any, any>> {
  const method = role === 'workflow' ? 'run' : 'grade';
  if (typeof ref === 'string') return toInvoke(await resolveSpec(ref, cwd), method, role);
  const suites = await loadSuites(ref.file);
  const suite = suites.find((s) => s.name === ref.suite);
  if (!suite) throw new Error(`${ref.file} no longer declares a suite named "${ref.suite}"`);
  const spec = ref.role === 'workflow' ? suite.workflow : suite.grader;
  if (spec === undefined) throw new Error(`suite "${ref.suite}" in ${ref.file} has no ${ref.role}`);
  return toInvoke(await resolveSpec(spec, path.dirname(ref.file)), method, `${ref.role} of suite "${ref.suite}"`);
}
