import type { RerunMode } from './suite-deps.ts';

/**
 * What the next rerun covers: per rollout file, every suite it declares (`'all'`, e.g. after the file itself
 * changed, when its suites may have other names now) or named suites with how each reruns.
 */
export type RerunPlan = Map<string, 'all' | Map<string, RerunMode>>;

/** Adds `mode` for one suite, or for a whole file; a run wins over a re-grade, and a whole file over suites. */
export function addToPlan(plan: RerunPlan, file: string, suite?: string, mode: RerunMode = 'run'): void {
  const current = plan.get(file);
  if (current === 'all') return;
  if (suite === undefined) return void plan.set(file, 'all');
  const suites = current ?? new Map<string, RerunMode>();
  if (suites.get(suite) !== 'run') suites.set(suite, mode);
  plan.set(file, suites);
}

/** Merges `from` into `into`. */
export function mergePlans(into: RerunPlan, from: RerunPlan): void {
  for (const [file, suites] of from) {
    if (suites === 'all') addToPlan(into, file);
    else for (const [suite, mode] of suites) addToPlan(into, file, suite, mode);
  }
}

/** How a suite reruns under the plan, or undefined when the plan leaves it out. */
export function modeIn(plan: RerunPlan, file: string, suite: string): RerunMode | undefined {
  const suites = plan.get(file);
  return suites === 'all' ? 'run' : suites?.get(suite);
}
