import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { sampleOfTrajectory, TrajectorySchema } from '../../model/atif/index.ts';
import type { RolloutSample } from '../../model/sample.ts';
import { backendEntry } from '../../backends/registry.ts';
import { TRAJECTORIES_DIR, trajectoryFileName } from '../output/trajectory-files.ts';
import { invalidRowRecord, toRecord } from './rollout-record.ts';
import { type RolloutDispatcher, runSuite } from './run-suite.ts';

/**
 * The sample of a rollout from an ATIF trajectory (`--load-trajectory`): a file stands for every rollout; a folder
 * holds `<rollout-id>.json` files, as a run folder's `trajectories/` does (a run folder itself may be given).
 * Undefined sample: the message says what was missing or wrong.
 */
function loadSample(source: string, id: string): { sample: RolloutSample } | { message: string } {
  const name = trajectoryFileName(id);
  const file = statSync(source).isDirectory() ? [path.join(source, name), path.join(source, TRAJECTORIES_DIR, name)].find((f) => existsSync(f)) : source;
  if (!file) return { message: `--load-trajectory: no trajectory of rollout ${id} in ${source} (looked for ${name} there and in its ${TRAJECTORIES_DIR}/)` };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return { message: `--load-trajectory: ${file} is not JSON: ${(error as Error).message}` };
  }
  const checked = TrajectorySchema.safeParse(json);
  if (!checked.success) {
    const issues = checked.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(top level)'}: ${i.message}`);
    return { message: `--load-trajectory: ${file} is not an ATIF trajectory: ${issues.join('; ')}` };
  }
  return { sample: sampleOfTrajectory(checked.data, 'trajectory') };
}

/**
 * Rollouts graded on the samples of ATIF trajectories instead of running their workflows: no workflow runs and no
 * model is called, as in watch mode's re-grade. A rollout without a usable trajectory, or of a backend that grades
 * only in its trials (Harbor's verifier), is a VALIDATION_ERROR that says so; the others are graded.
 */
function trajectoryDispatcher(source: string): RolloutDispatcher {
  return async (planned, backend, settings, graded, ctx, record) => {
    const regrade = backendEntry(settings.backend).regrade;
    if (!regrade) return record(invalidRowRecord(planned.key, `--load-trajectory: the ${settings.backend.type} backend grades in its trials, not from a trajectory`), []);
    const loaded = loadSample(source, planned.key.id);
    if ('message' in loaded) return record(invalidRowRecord(planned.key, loaded.message), []);
    await regrade(backend, planned.request, [loaded.sample], (result) => record(toRecord(planned.key, result, settings.passThreshold, graded, planned.request.label), result.samples), {
      signal: ctx.signal,
    });
  };
}

/** The run of a suite under `--load-trajectory <source>`. */
export function loadTrajectoryRunner(source: string): typeof runSuite {
  const dispatch = trajectoryDispatcher(source);
  return (file, suite, ctx) => runSuite(file, suite, ctx, dispatch);
}
