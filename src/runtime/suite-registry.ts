import { loadModule } from './load-module.ts';
import { invalidateModules, moduleVersion, versionedSpecifier } from './module-versions.ts';
import { collectDeclaredSuites, type RolloutSuite } from './suite.ts';

/**
 * Each rollout file's suites, as declared by the version of the file last loaded (older ones are let go), and that
 * version's exports.
 */
const loaded = new Map<string, { version: number; suites: Promise<RolloutSuite<any, any>[]>; exports: Promise<Record<string, unknown>> }>();
/** Files whose last load failed: Node keeps a failed module's error for its URL, so a retry needs a new version. */
const failed = new Set<string>();

/** Imports a module at its current version (see `module-versions.ts`); outside watch mode, the one plain, shared copy. */
function importCurrent(file: string): Promise<Record<string, unknown>> {
  return loadModule(versionedSpecifier(file), process.cwd());
}

/**
 * A project module's exports: a rollout file's as of the version its suites were last loaded from, any other
 * module's at its current version. A rollout file is evaluated only by {@link loadSuites}, which collects what it
 * declares: in watch mode a save can give the file a new version while a rerun is under way, and that version
 * evaluated here first would be cached with its `defineRollout` calls unheard, so that the next rerun found
 * the file declaring no suite.
 */
export function importProjectModule(file: string): Promise<Record<string, unknown>> {
  return loaded.get(file)?.exports ?? importCurrent(file);
}

/** The suites a rollout file declares, loaded once per version of the file. */
export function loadSuites(file: string): Promise<RolloutSuite<any, any>[]> {
  const version = moduleVersion(file);
  let entry = loaded.get(file);
  if (!entry || entry.version !== version) {
    let exports: Promise<Record<string, unknown>> | undefined;
    const suites = collectDeclaredSuites(() => (exports = importCurrent(file)));
    suites.catch(() => failed.add(file));
    // The suites settle once the import did (and fail with it): the import has started by then.
    const exported = suites.then(() => exports!);
    exported.catch(() => undefined);
    entry = { version, suites, exports: exported };
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
