import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseExportRef } from '../../runtime/implementation.ts';
import { resolveModuleSpecifier } from '../../runtime/load-module.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { modelScript } from '../run/model-endpoints.ts';
import { isInstalled, type PackageRef, packageName, packageOf, unresolvedPackage } from './package-imports.ts';

/** Where the module of a `"module:export"` string resolves from `dir`: a file, a package that does not resolve, or nothing (malformed). */
function resolveRef(spec: string, dir: string): { file?: string; bare?: string } | undefined {
  try {
    const { module } = parseExportRef(spec);
    const url = resolveModuleSpecifier(module, dir);
    return url.startsWith('file:') ? { file: fileURLToPath(url), bare: module } : { bare: module };
  } catch {
    return undefined; // A malformed reference fails the suite's first rollout, with the expected form.
  }
}

/** The local module a `"module:export"` string names from `dir`, if it is the project's code (a workspace package's included). */
export function refModule(spec: string, dir: string): string | undefined {
  const file = resolveRef(spec, dir)?.file;
  return file && !isInstalled(file) ? file : undefined;
}

/** The installed package a `"module:export"` string names from `dir`, if it names one. */
export async function refPackage(spec: string, dir: string): Promise<PackageRef | undefined> {
  const ref = resolveRef(spec, dir);
  if (!ref?.bare || ref.bare.startsWith('.') || path.isAbsolute(ref.bare)) return undefined;
  if (!ref.file) return unresolvedPackage(packageName(ref.bare));
  return isInstalled(ref.file) ? packageOf(ref.file, packageName(ref.bare)) : undefined;
}

/**
 * The `"module:export"` strings a suite's rollouts load, each with the directory it resolves from: its workflow
 * and grader (from the rollout file's directory), and the model script that answers its calls: its own, else the
 * config's (from the root).
 */
export function suiteCodeRefs(file: string, suite: RolloutSuite<any, any>, config: ResolvedConfig): Array<{ spec: string; dir: string }> {
  const refs = [suite.workflow, suite.grader].filter((s): s is string => typeof s === 'string').map((spec) => ({ spec, dir: path.dirname(file) }));
  const script = modelScript(suite, file, config);
  return script ? [...refs, { spec: script.spec, dir: script.cwd }] : refs;
}
