import type { ResolvedConfig } from '../config/resolve-config.ts';
import { findRolloutFiles } from '../discovery/find-rollout-files.ts';
import type { SuiteReport } from '../types/run-report.ts';
import { suiteKey } from '../types/suite-key.ts';
import { addToPlan, type RerunPlan } from './plan.ts';
import { SampleStore } from './sample-store.ts';
import { rerunModeFor, type SuiteDeps } from './suite-deps.ts';

const hasFailures = (r: SuiteReport) => Boolean(r.error || r.thresholdMissed || r.stats.counts.failed || r.stats.counts.errored);

/** What watch mode knows between reruns: the rollout files, what their suites depend on, their last results. */
export class ProjectState {
  /** Each rollout file and the dependencies of its suites (none until it loads). */
  readonly files = new Map<string, SuiteDeps[]>();
  /** The last report of each suite, by {@link suiteKey} (a file that failed to load: its path as the name). */
  readonly reports = new Map<string, SuiteReport>();
  readonly samples = new SampleStore();

  /** Finds the rollout files again; files that appeared are added, files gone (or filtered out) dropped. */
  async refreshFiles(config: ResolvedConfig): Promise<{ added: string[]; removed: string[] }> {
    const found = new Set(await findRolloutFiles(config.root, config.include, config.exclude, config.fileFilters));
    const added = [...found].filter((file) => !this.files.has(file));
    const removed = [...this.files.keys()].filter((file) => !found.has(file));
    for (const file of added) this.files.set(file, []);
    for (const file of removed) this.forget(file);
    return { added, removed };
  }

  /** Drops a file's last reports (before it reruns whole, its suites may have been renamed), or the file itself. */
  forget(file: string, keepFile = false): void {
    if (!keepFile) this.files.delete(file);
    for (const [key, report] of this.reports) if (report.file === file) this.reports.delete(key);
  }

  /** Adds what the changed paths call for to `plan`; returns the paths that mattered to some suite. */
  planChanges(paths: Iterable<string>, plan: RerunPlan): string[] {
    const mattered: string[] = [];
    for (const changed of paths) {
      let hit = this.files.has(changed);
      if (hit) addToPlan(plan, changed);
      for (const deps of [...this.files.values()].flat()) {
        const mode = rerunModeFor(deps, changed);
        if (mode) addToPlan(plan, deps.file, deps.name, mode);
        hit ||= mode !== undefined;
      }
      if (hit) mattered.push(changed);
    }
    return mattered;
  }

  /** Every known file, whole. */
  allPlan(): RerunPlan {
    return new Map([...this.files.keys()].map((file) => [file, 'all']));
  }

  /** The suites whose last run failed, errored or missed a threshold, and the files that failed to load. */
  failedPlan(): RerunPlan {
    const plan: RerunPlan = new Map();
    for (const report of this.reports.values()) {
      if (!hasFailures(report)) continue;
      if (report.name === report.file) addToPlan(plan, report.file);
      else addToPlan(plan, report.file, report.name);
    }
    return plan;
  }

  /** Keeps a suite's report, its records in memory: the run's journal, which they are read from, may be pruned. */
  record(report: SuiteReport): void {
    this.reports.set(suiteKey(report.file, report.name), { ...report, records: report.records.inMemory() });
  }
}
