import { loadModule } from './load-module.ts';
import { collectDeclaredSuites, type RolloutSuite } from './suite.ts';

const loaded = new Map<string, Promise<RolloutSuite<any, any>[]>>();

/**
 * The suites a rollout file declares. `version` busts the module cache so that watch mode sees edits.
 */
export function loadSuites(file: string, version = 0): Promise<RolloutSuite<any, any>[]> {
  const key = `${file}?v=${version}`;
  let suites = loaded.get(key);
  if (!suites) {
    const specifier = version === 0 ? file : `${file}?v=${version}`;
    suites = collectDeclaredSuites(() => loadModule(specifier, process.cwd()));
    loaded.set(key, suites);
  }
  return suites;
}
