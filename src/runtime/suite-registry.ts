import { loadModule } from './load-module.ts';
import { invalidateModules, moduleVersion, versionedSpecifier } from './module-versions.ts';
import { collectDeclaredSuites, type RolloutSuite } from './suite.ts';

/** Each rollout file's suites, as declared by the version of the file last loaded (older ones are let go). */
const loaded = new Map<string, { version: number; suites: Promise<RolloutSuite<any, any>[]> }>();
/** Files whose last load failed: Node keeps a failed module's error for its URL, so a retry needs a new version. */
const failed = new Set<string>();

/**
 * Imports a module at its current version (see `module-versions.ts`): in watch mode the version the last
 * loaded rollout files import; elsewhere the one plain, shared copy.
 */
export function importProjectModule(file: string): Promise<Record<string, unknown>> {
  return loadModule(versionedSpecifier(file), process.cwd());
}

/** The suites a rollout file declares, loaded once per version of the file. */
export function loadSuites(file: string): Promise<RolloutSuite<any, any>[]> {
  const version = moduleVersion(file);
  let entry = loaded.get(file);
  if (!entry || entry.version !== version) {
    const suites = collectDeclaredSuites(() => importProjectModule(file));
    suites.catch(() => failed.add(file));
    entry = { version, suites };
    loaded.set(file, entry);
  }
  return entry.suites;
}

/**
 * Makes the next {@link loadSuites} of these files load anew those that failed last time; the others load
 * anew only once one of their modules changed ({@link invalidateModules}).
 */
export async function retryFailedLoads(files: Iterable<string>): Promise<void> {
  const retried = [...files].filter((file) => failed.delete(file));
  if (retried.length) await invalidateModules(retried);
}
