import { backendNamed } from '../../backends/registry.ts';
import { toRecord } from '../run/rollout-record.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { SuiteReport } from '../types/run-report.ts';
import type { RolloutDispatcher } from '../run/run-suite.ts';
import type { SampleStore } from './sample-store.ts';

/** A rollout whose workflow did not produce samples to grade: its record stands as it was. */
const workflowFailed = (record: RolloutRecord) => record.error !== undefined && record.error.phase !== 'grader';

/**
 * Whether the last run of a suite left what a re-grade needs: a record and stored samples for every rollout,
 * none of them cancelled, on a backend that can grade alone (see the registry's `regrade`).
 */
export function canRegrade(previous: SuiteReport | undefined, store: SampleStore): previous is SuiteReport {
  if (!previous || previous.error || !backendNamed(previous.backend)?.regrade || previous.records.length === 0) return false;
  return [...previous.records].every((r) => r.status !== 'skipped' && store.get(r.id) !== undefined);
}

/**
 * Rollouts run as grader only, over the samples the last run stored: no workflow runs and no model is
 * called. A rollout whose workflow failed keeps its record (there is nothing to grade).
 */
export function regradeDispatcher(previous: SuiteReport, store: SampleStore): RolloutDispatcher {
  const records = new Map([...previous.records].map((r) => [r.id, r]));
  return async (planned, backend, settings, graded, ctx, record) => {
    const before = records.get(planned.key.id);
    const samples = store.get(planned.key.id);
    if (!before || !samples) throw new Error(`no stored samples for rollout ${planned.key.id}: press a to run it again`);
    if (workflowFailed(before)) return record(before, samples);
    const regrade = backendNamed(previous.backend)?.regrade;
    if (!regrade) throw new Error(`the ${previous.backend} backend does not grade stored samples`);
    await regrade(
      backend,
      planned.request,
      samples,
      (result) => {
        record(toRecord(planned.key, result, settings.passThreshold, graded, planned.request.label), result.samples);
      },
      { signal: ctx.signal },
    );
  };
}
