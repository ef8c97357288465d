import { definitionStack } from '../../runtime/define-rollout.ts';
import { toRolloutError } from '../../runtime/errors.ts';
import { userFrame } from '../stack/user-frame.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { RunOutputs } from '../output/run-outputs.ts';
import { agentNameOf } from '../output/trajectory-files.ts';
import { labelFromJsonWarning, type PlannedRollout, planBatches, type SuitePlanInput, whyNothingPlanned, rowsAllInOtherShards } from './plan-suite.ts';
import { suiteIdPrefix } from './request-id.ts';
import { budgetSkippedRecord, invalidRowRecord, toRecord } from './rollout-record.ts';
import type { RunBudget } from '../cost/budget.ts';
import type { RunInputs } from '../output/run-inputs.ts';
import { rowHash } from '../dataset/row-hash.ts';
import { hashSuiteInputs } from './suite-inputs.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { SuiteReport } from '../types/run-report.ts';
import { buildSuiteReport, markPartial } from './suite-report.ts';
import { AdaptiveRounds } from './adaptive-rounds.ts';
import { backendEntry } from '../../backends/registry.ts';
import { createSuiteBackend, type SuiteBackendInput } from './suite-backend.ts';
import { type SuiteSettings, suiteSettings } from './suite-settings.ts';
import type { ExecutionBackend } from '../../backends/backend.ts';
import type { ExecutionRequest } from '../../model/request.ts';
import type { ExecutionResult } from '../../model/result.ts';
import type { RolloutSample } from '../../model/sample.ts';
import type { ModelCacheSettings } from '../../runtime/rollout-context.ts';
import type { ModelEndpoints } from './model-endpoints.ts';
import type { LateFaults } from './late-faults.ts';
import type { LateFault } from '../../runtime/faults.ts';

/** What every suite of a run shares. */
export interface RunContext {
  config: ResolvedConfig;
  pool: WorkerPool;
  models: ModelEndpoints;
  modelCache: ModelCacheSettings | undefined;
  outputs: RunOutputs;
  /** This run's directory in the history: its journal, samples, summary, trials and artifacts. */
  runDir: string;
  /** With `--resume`: rollouts of the last run that already have a result, by id; they are not run again. */
  finished: Map<string, RolloutRecord>;
  /** Faults of rollouts that arrive after their phase ended. */
  lateFaults: LateFaults;
  /** The run's spend caps: once reached, no rollout starts (see {@link RunBudget}). */
  budget?: RunBudget | undefined;
  /** The hashes of what each suite runs with, for the run history (none in watch mode). */
  inputs?: RunInputs | undefined;
  /** Aborts on Ctrl-C or `--bail`: no new rollouts start, running ones are cancelled. */
  signal: AbortSignal;
  onRecord(record: RolloutRecord): void;
  /** Told once a suite's rollouts have all settled, before its report is built (the run's grace for late faults starts with the last). */
  onRolloutsSettled?(): void;
  /** Where suites run elsewhere (a queue of workers): their backends, and how many rollouts each hands out ahead. */
  remote?: RemoteBackends | undefined;
}

/** Backends that run a suite's rollouts elsewhere, e.g. on the workers of a queue. */
export interface RemoteBackends {
  create(input: SuiteBackendInput): Promise<ExecutionBackend>;
  /** Hears the rollout files discovery found, before it loads them: what `create` needs can be started early. */
  found?(paths: string[]): void;
  /** Rollouts of a suite handed out before their results are back: the suite's own concurrency does not apply. */
  window: number;
  /**
   * The faults of rollouts' code that came after each rollout had finished where it ran: asked once every rollout
   * has its result; resolves once each place that ran some has closed its window for late faults (its own grace).
   */
  lateFaults(): Promise<LateFault[]>;
}

/**
 * Rollouts handed to the backend ahead of its free slots, so that it never waits on the dataset reader (a worker
 * pool's threads hold those back to the limit and start the next as one ends). With `--bail`, no more than
 * {@link READ_AHEAD} times the limit: what was handed out when the run stops is reported as cancelled. Without it,
 * at least {@link MIN_AHEAD} beyond the limit, so that a thread always has the next rollouts at hand and their
 * results come back in batches instead of a round trip per few rollouts.
 */
const READ_AHEAD = 2;
const MIN_AHEAD = 32;
const UNBOUNDED_IN_FLIGHT = 1024;

/** How many of a suite's rollouts are handed to its backend at once (`concurrency` null: no limit). */
function inFlightLimit(concurrency: number | null, bails: boolean): number {
  if (concurrency === null) return UNBOUNDED_IN_FLIGHT;
  return bails ? concurrency * READ_AHEAD : concurrency + Math.max(concurrency, MIN_AHEAD);
}

/**
 * With a budget, a suite hands its backend only what can start at once (no read-ahead, locally or on a queue):
 * a rollout handed out is one started, so that none starts after the spend reached the cap.
 */
const budgetedLimit = (concurrency: number | null) => concurrency ?? UNBOUNDED_IN_FLIGHT;

/**
 * Runs one planned rollout on the suite's backend and records its final result with its samples (`record` writes
 * both to the run's files). Watch mode passes its own, to re-grade stored samples instead.
 */
export type RolloutDispatcher = (
  planned: Extract<PlannedRollout, { kind: 'request' }>,
  backend: ExecutionBackend,
  settings: SuiteSettings,
  graded: boolean,
  ctx: RunContext,
  record: (r: RolloutRecord, samples: RolloutSample[]) => void,
) => Promise<void>;

/**
 * Runs a request on a backend; `onFinal` hears its final result, in the grader callback's turn. A failed workflow is
 * reported as itself, not as the "not graded" notice the grader callback carries. `lateFaults` knows the rollout runs
 * meanwhile: a fault of its code after a phase ended is a late fault (see LateFaults). Not an async function: it
 * returns the backend's own promise, one async frame less per rollout.
 */
export function executeTracked(
  backend: ExecutionBackend,
  request: ExecutionRequest,
  signal: AbortSignal,
  lateFaults: LateFaults,
  onFinal: (result: ExecutionResult) => void,
): Promise<void> {
  lateFaults.start(request.id);
  let workflowError: ExecutionResult['error'];
  return backend.execute(
    request,
    (result) => void (workflowError = result.error),
    (result) => {
      lateFaults.finish(request.id);
      onFinal(workflowError ? { ...result, error: workflowError } : result);
    },
    { signal },
  );
}

const dispatch: RolloutDispatcher = (planned, backend, settings, graded, ctx, record) =>
  executeTracked(backend, planned.request, ctx.signal, ctx.lateFaults, (final) =>
    record(toRecord(planned.key, final, settings.passThreshold, graded, planned.request.label), final.samples),
  );

/**
 * Whether a suite's rollouts get a reward: from its Grader, or, on Harbor, from the task's verifier (its
 * tests/test.sh; a task with neither fails verification). Only ungraded suites may end without a reward.
 */
const isGraded = (suite: RolloutSuite<any, any>, settings: SuiteSettings) => suite.grader !== undefined || backendEntry(settings.backend).gradesItself;

/**
 * The rollouts of a suite that are running: how many, a wait for the next to end, and one for all of them. A
 * counter and one reaction per rollout, not a set of promises with a `finally` each (which makes two promises more
 * per rollout), nor `Promise.race` over them (a reaction on every running rollout per dispatch, O(n²) at high
 * concurrency). Like `Promise.all`, {@link settled} rejects with the first rollout that rejected.
 */
class InFlight {
  size = 0;
  #failed: { error: unknown } | undefined;
  #slotFreed: (() => void) | undefined;
  #drained: (() => void) | undefined;
  readonly #done = () => {
    this.size--;
    const slotFreed = this.#slotFreed;
    this.#slotFreed = undefined;
    slotFreed?.();
    if (this.size === 0) this.#drained?.();
  };
  readonly #fail = (error: unknown) => {
    this.#failed ??= { error };
    this.#done();
  };

  add(running: Promise<void>): void {
    this.size++;
    running.then(this.#done, this.#fail);
  }

  /** Resolves when the next running rollout ends. */
  slotFreed(): Promise<void> {
    return new Promise<void>((resolve) => (this.#slotFreed = resolve));
  }

  /** Resolves once none runs; rejects with the first failure, if a rollout's promise rejected. */
  async settled(): Promise<void> {
    if (this.size > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    if (this.#failed) throw this.#failed.error;
  }
}

/** Runs every rollout of one suite, streaming its dataset, and reports each as it finishes. */
export async function runSuite(file: string, suite: RolloutSuite<any, any>, ctx: RunContext, run: RolloutDispatcher = dispatch): Promise<SuiteReport> {
  const started = performance.now();
  const settings = suiteSettings(suite, ctx.config);
  const idPrefix = suiteIdPrefix(ctx.config.root, file, suite.name);
  // Records go to the journal; the suite keeps what its statistics need and where each record is.
  const records = ctx.outputs.suiteRecords();
  const agent = agentNameOf(suite.workflow);
  const record = (r: RolloutRecord, samples?: RolloutSample[]) => {
    records.add(r, samples && ctx.outputs.rollout(r, samples, agent));
    ctx.onRecord(r);
  };
  let error: SuiteReport['error'];
  let backend: ExecutionBackend | undefined;
  const inFlight = new InFlight();
  const seen: NonNullable<SuitePlanInput['seen']> = { rows: 0 };
  let stoppedEarly = false;
  // Adaptive rounds run on the suite's own dispatcher only: watch mode's re-grading has no samples for new runs.
  const adaptive = ctx.config.adaptive && run === dispatch ? new AdaptiveRounds({ ...ctx.config.adaptive, initialRuns: settings.runs }, idPrefix) : undefined;
  const recordAll = adaptive
    ? (r: RolloutRecord, samples?: RolloutSample[]) => {
        record(r, samples);
        adaptive.recorded(r);
      }
    : record;
  let budgetSkipped = 0;
  const hashing = ctx.inputs && hashSuiteInputs(ctx.inputs, idPrefix, file, suite, settings, ctx.config);
  try {
    // Remote workers start the suite's model endpoint themselves, beside the rollouts.
    const chatCompletionsUrl = ctx.remote ? undefined : await ctx.models.urlFor(suite, file);
    const input = { file, suite, settings, config: ctx.config, pool: ctx.pool, chatCompletionsUrl, modelCache: ctx.modelCache, runDir: ctx.runDir };
    const suiteBackend = await (ctx.remote ? ctx.remote.create(input) : createSuiteBackend(input));
    backend = suiteBackend;
    const limit = ctx.budget ? budgetedLimit(settings.concurrency) : (ctx.remote?.window ?? inFlightLimit(settings.concurrency, ctx.config.bail !== undefined));
    const graded = isGraded(suite, settings);
    /** Hands one planned rollout out (or records it at once); false once the run stops. */
    const handOut = async (planned: PlannedRollout): Promise<boolean> => {
      if (ctx.signal.aborted) {
        stoppedEarly = true;
        return false;
      }
      if (planned.kind === 'request') ctx.inputs?.row(idPrefix, planned.key.row, () => rowHash(planned.request));
      // A resumed run's finished rollout is in the journal already, from the run it resumes.
      const done = ctx.finished.get(planned.key.id);
      if (done) recordAll(done);
      else if (planned.kind === 'invalid') recordAll(invalidRowRecord(planned.key, planned.message), []);
      else if (ctx.budget?.reached()) {
        // Once the spend reaches the budget, the rest never start: skipped, out of every denominator.
        recordAll(budgetSkippedRecord(planned.key), []);
        budgetSkipped++;
      } else {
        inFlight.add(run(planned, suiteBackend, settings, graded, ctx, recordAll));
        if (inFlight.size >= limit) await inFlight.slotFreed();
      }
      return true;
    };
    planning: for await (const batch of planBatches({ file, suite, settings, config: ctx.config, idPrefix, seen })) {
      for (const planned of batch) {
        adaptive?.planned(planned);
        if (!(await handOut(planned))) break planning;
      }
    }
    // Each round starts once the one before has ended: its runs go where the results say they help most.
    while (adaptive && !stoppedEarly) {
      await inFlight.settled();
      const round = adaptive.next(ctx.budget?.reached());
      if (round.length === 0) break;
      for (const planned of round) if (!(await handOut(planned))) break;
    }
  } catch (caught) {
    error = toRolloutError(caught, 'setup');
  } finally {
    await inFlight.settled();
    ctx.onRolloutsSettled?.();
    await Promise.all([backend?.close(), hashing]);
  }
  const meta = {
    name: suite.name,
    file,
    key: idPrefix,
    backend: settings.backend.type,
    runs: settings.runs,
    passThreshold: settings.passThreshold,
    thresholds: settings.thresholds,
    definedAt: userFrame(definitionStack(suite)),
  };
  const report = buildSuiteReport(meta, records, performance.now() - started, error, adaptive && ((stats) => adaptive.apply(stats)));
  if (budgetSkipped > 0 || adaptive?.stoppedByBudget) markPartial(report);
  if (stoppedEarly || report.stats.counts.skipped > budgetSkipped) report.cancelled = true;
  else if (records.length === 0 && !error) {
    report.noRollouts = whyNothingPlanned(suite, ctx.config, seen);
    // Only when other shards hold every row --rows selected: a row this shard holds that has no result is a finding.
    if (rowsAllInOtherShards(ctx.config, seen)) report.rowsInOtherShards = true;
  }
  if (seen.labelFromJson) report.warnings = [labelFromJsonWarning(seen.labelFromJson, ctx.config.root)];
  return report;
}
