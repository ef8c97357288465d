import { loadModule } from './load-module.ts';
import { collectDeclaredSuites, type RolloutSuite } from './suite.ts';

const loaded = new Map<string, Promise<RolloutSuite<any, any>[]>>();
/** The version each reloaded file is at; files never reloaded are at 0 (the plain, shared module cache). */
const versions = new Map<string, number>();
let generation = 0;
const namespaces = new Map<number, Promise<(specifier: string, parentUrl: string) => Promise<Record<string, unknown>>>>();

/**
 * Imports `specifier` in the module graph of `version`. A `?v=N` query alone would re-run only the rollout
 * file and keep its imports cached; a tsx namespace per version re-imports every local file it reaches.
 */
function importInVersion(specifier: string, version: number): Promise<Record<string, unknown>> {
  if (version === 0) return loadModule(specifier, process.cwd());
  let scoped = namespaces.get(version);
  if (!scoped) {
    scoped = import('tsx/esm/api').then(({ register }) => register({ namespace: `rollout-test-v${version}` }).import);
    namespaces.set(version, scoped);
  }
  return scoped.then((load) => load(specifier, import.meta.url));
}

/**
 * The suites a rollout file declares. `version` busts the module cache so that watch mode sees edits; it
 * defaults to the version {@link reloadSuites} last gave the file.
 */
export function loadSuites(file: string, version = versions.get(file) ?? 0): Promise<RolloutSuite<any, any>[]> {
  const key = `${file}?v=${version}`;
  let suites = loaded.get(key);
  if (!suites) {
    suites = collectDeclaredSuites(() => importInVersion(file, version));
    loaded.set(key, suites);
  }
  return suites;
}

/** Makes the next {@link loadSuites} of these files import them, and every local module they import, anew. */
export function reloadSuites(files: Iterable<string>): void {
  generation++;
  for (const file of files) versions.set(file, generation);
}

/**
 * Imports `module` as the last loaded copy of rollout file `file` sees it, so that the classes its suites
 * name compare equal (`===`) to that module's exports.
 */
export function importBesideSuites(file: string, module: string): Promise<Record<string, unknown>> {
  return importInVersion(module, versions.get(file) ?? 0);
}
