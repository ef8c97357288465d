import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { type CollectedFile, collectSuites } from '../discovery/collect-suites.ts';
import { findRolloutFiles } from '../discovery/find-rollout-files.ts';
import { RunOutputs } from '../output/run-outputs.ts';
import { finishedRollouts, readJournal } from '../output/journal-reader.ts';
import { openRun } from '../output/run-history.ts';
import { unmarkInUse } from '../output/run-in-use.ts';
import type { ReporterSet } from '../reporters/reporter-set.ts';
import { countPlanned } from './plan-suite.ts';
import { runPool } from './run-pool.ts';
import { suiteIdPrefix } from './request-id.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { RunReport, SuiteReport } from '../types/run-report.ts';
import { budgetReport, compareSuite, finishRun, type RunTotals, runTotals, verdictOptions } from './finish-run.ts';
import { preflight } from './preflight.ts';
import { toRolloutError } from '../../runtime/errors.ts';
import { loadTrajectoryRunner } from './load-trajectory.ts';
import { type RemoteBackends, type RunContext, runSuite } from './run-suite.ts';
import { buildSuiteReport } from './suite-report.ts';
import { SuiteRecords } from '../output/suite-records.ts';
import { passThresholdOf, suiteSettings } from './suite-settings.ts';
import { STOP_SIGNALS, type StopSignal } from '../types/stop-signals.ts';
import { resolveModelCache } from '../../integrations/recording/model-cache-settings.ts';
import { ModelEndpoints } from './model-endpoints.ts';
import { installFaultHandlers, type LateFault, onLateFault } from '../../runtime/faults.ts';
import { busyAtFlush, LATE_FAULT_GRACE_MS, LateFaults } from './late-faults.ts';
import { suiteKey } from '../types/suite-key.ts';
import { RunBudget } from '../cost/budget.ts';
import { RunInputs } from '../output/run-inputs.ts';
import { withFlakiness } from './suite-inputs.ts';
import { UnhandledErrors } from './unhandled-errors.ts';

/** The rollout files and suites a run would execute, with their planned rollouts. */
export interface DiscoveredRun {
  files: CollectedFile[];
  counts: Map<string, { rows: number; rollouts: number } | Error>;
  /** What matched nothing, when no file or no suite was found: such a run fails unless `--pass-with-no-rollouts`. */
  nothingMatched?: string;
}

/**
 * Finds and loads the rollout files and counts what each suite would run (what `list` prints). `onFound` hears
 * the paths before they are loaded, so that worker threads can load them at the same time.
 */
export async function discover(config: ResolvedConfig, onFound?: (paths: string[]) => void, requireDataset = true): Promise<DiscoveredRun> {
  const paths = await findRolloutFiles(config.root, config.include, config.exclude, config.fileFilters);
  if (paths.length === 0) {
    const where = config.fileFilters.length ? ` matching ${config.fileFilters.join(', ')}` : '';
    return { files: [], counts: new Map(), nothingMatched: `no rollout files found${where} under ${config.root} (include: ${config.include.join(', ')})` };
  }
  onFound?.(paths);
  const run = await countRun(await collectSuites(paths, config.namePattern, requireDataset), config);
  const unmatched = config.namePattern && run.files.every((f) => !f.loadError && f.suites.length === 0);
  return unmatched ? { ...run, nothingMatched: `no suite matches -t ${config.namePattern!.source} in ${paths.length} rollout file${paths.length === 1 ? '' : 's'}` } : run;
}


/** Counts what each suite of already loaded files would run. */
async function countRun(files: CollectedFile[], config: ResolvedConfig): Promise<DiscoveredRun> {
  const counts: DiscoveredRun['counts'] = new Map();
  for (const { file, suites } of files) {
    for (const suite of suites) {
      const input = { file, suite, settings: suiteSettings(suite, config), config, idPrefix: suiteIdPrefix(config.root, file, suite.name) };
      counts.set(suiteKey(file, suite.name), await countPlanned(input).catch((error: Error) => error));
    }
  }
  return { files, counts };
}

/** The report of a file that failed to load (`suite` undefined), or of a suite that failed past its own handling. */
function failedReport(file: string, suite: string | undefined, error: SuiteReport['error'], config: ResolvedConfig): SuiteReport {
  const passThreshold = passThresholdOf(config);
  const meta = { name: suite ?? file, file, key: suiteIdPrefix(config.root, file, suite ?? ''), backend: 'none', runs: 0, passThreshold, thresholds: {} };
  return buildSuiteReport(meta, SuiteRecords.of([]), 0, error);
}

/**
 * A suite's report, also when running or reporting it failed unexpectedly: that suite fails (its rollouts stay in
 * the journal), and every other suite's report is still written.
 */
function reportOf(running: Promise<SuiteReport>, file: string, suite: string, config: ResolvedConfig): Promise<SuiteReport> {
  return running.catch((error: unknown) => {
    const failure = toRolloutError(error, 'setup', 'AGENT_ERROR');
    return failedReport(file, suite, { ...failure, message: `the suite could not be reported: ${failure.message}` }, config);
  });
}

/** How long cancelled rollouts may take to stop before their threads are terminated. */
const CANCEL_GRACE_MS = 2_000;

const STOPPED_BECAUSE: Record<NonNullable<RunReport['interrupted']>, (config: ResolvedConfig) => string> = {
  sigint: () => 'cancelled by Ctrl-C',
  sigterm: () => 'cancelled by SIGTERM',
  sighup: () => 'cancelled by SIGHUP',
  bail: (config) => `stopped after ${config.bail} failures (--bail)`,
  'write-error': () => 'stopped: an output file could not be written',
};

/** Which signal an interrupt stands for; watch mode's own cancels are Ctrl-C's. */
function stopSignalOf(reason: unknown): StopSignal {
  return typeof reason === 'string' && reason in STOP_SIGNALS ? (reason as StopSignal) : 'sigint';
}

/** Stops the run on a signal (the interrupt's reason names it: `sigint`, `sigterm`, `sighup`) or after `--bail` failures. */
function runController(config: ResolvedConfig, interrupt: AbortSignal) {
  const controller = new AbortController();
  // Every running rollout listens to this signal (hundreds at --max-concurrency 200): no leak warning for that.
  setMaxListeners(0, controller.signal);
  let reason: RunReport['interrupted'];
  const stop = (why: NonNullable<RunReport['interrupted']>) => {
    reason ??= why;
    controller.abort(new Error(STOPPED_BECAUSE[why](config)));
  };
  const onInterrupt = () => stop(stopSignalOf(interrupt.reason));
  if (interrupt.aborted) onInterrupt();
  interrupt.addEventListener('abort', onInterrupt, { once: true });
  let failures = 0;
  const onRecord = (record: RolloutRecord) => {
    if ((record.status === 'failed' || record.status === 'errored') && config.bail !== undefined && ++failures >= config.bail) stop('bail');
  };
  return { signal: controller.signal, onRecord, stop, reason: () => reason };
}

/**
 * Hears the faults that rollouts' code raises after their phase ended: from the pool's threads, and, when
 * workflows run inline, from this thread (whose fault handlers then stay installed for the whole run, so
 * that a timer firing between rollouts is traced to its rollout instead of crashing the run).
 */
function hearLateFaults(pool: WorkerPool, inline: boolean, listener: (fault: LateFault) => void): () => void {
  const stops = [pool.onLateFault(listener)];
  if (inline) stops.push(installFaultHandlers(), onLateFault(listener));
  return () => {
    for (const stop of stops) stop();
  };
}

/**
 * Adds the late faults of rollouts that ran remotely: their workers decided that each came after its rollout
 * finished. Faults that cannot be read are missing from the reports, and stderr says so.
 */
async function hearRemoteLateFaults(remote: RemoteBackends | undefined, lateFaults: LateFaults): Promise<void> {
  try {
    for (const fault of (await remote?.lateFaults()) ?? []) lateFaults.add(fault);
  } catch (error) {
    process.stderr.write(`rollout-test: cannot read the late faults of the remote rollouts: ${(error as Error).message}\n`);
  }
}

/** What watch mode changes about a run: which files and suites run, and how each suite runs. */
export interface RunOptions {
  /** Already loaded files (with only the suites to run), instead of discovering them all. */
  files?: CollectedFile[];
  runSuite?: typeof runSuite;
  /** Run the suites elsewhere (the workers of a queue) instead of in this process's pool and trials. */
  remote?: RemoteBackends;
  /** The run's worker pool ({@link runPool}), started early; the run closes it unless `keepPool`. */
  pool?: WorkerPool | undefined;
  /**
   * The pool outlives the run (watch mode's, kept across reruns): the run does not close it, and recycles its
   * workers instead when cancelled rollouts do not stop within the grace.
   */
  keepPool?: boolean;
  /** The process is the CLI's: its faults outside any rollout are the run's unhandled errors (see UnhandledErrors). */
  ownsProcess?: boolean;
}

/**
 * Runs every discovered suite, telling the reporters as rollouts and suites end. A reporter that throws, rejects or
 * hangs is named on stderr and given up for that event; the others go on, and the run exits 1 at least.
 */
export async function runRollouts(config: ResolvedConfig, reporters: ReporterSet, interrupt: AbortSignal, options: RunOptions = {}): Promise<RunReport> {
  const startedAt = new Date();
  const started = performance.now();
  const { baseline } = preflight(config);
  const pool = options.pool ?? runPool(config.pool);
  // Before the rollout files load: a timer one starts as it loads can fire while the next one loads.
  const unhandled = new UnhandledErrors(pool, options.ownsProcess === true);
  try {
    return await runLoaded(config, reporters, interrupt, options, { startedAt, started, baseline, pool, unhandled });
  } finally {
    unhandled.stop();
  }
}

/** What a run settled before its rollout files load. */
interface RunStart {
  startedAt: Date;
  started: number;
  baseline: ReturnType<typeof preflight>['baseline'];
  pool: WorkerPool;
  unhandled: UnhandledErrors;
}

/** {@link runRollouts} from the loading of its rollout files on. */
async function runLoaded(config: ResolvedConfig, reporters: ReporterSet, interrupt: AbortSignal, options: RunOptions, start: RunStart): Promise<RunReport> {
  const { startedAt, started, baseline, pool, unhandled } = start;
  const preload = (paths: string[]) => (options.remote ? options.remote.found?.(paths) : config.inline ? undefined : pool.preload(paths));
  if (options.files) preload(options.files.map((f) => f.file));
  const { files, counts, nothingMatched } = options.files ? await countRun(options.files, config) : await discover(config, preload);
  const runOne = options.runSuite ?? (config.loadTrajectory ? loadTrajectoryRunner(config.loadTrajectory) : runSuite);
  const total = [...counts.values()].reduce((sum, c) => sum + (c instanceof Error ? 0 : c.rollouts), 0);
  const suiteCount = files.reduce((sum, f) => sum + (f.loadError ? 1 : f.suites.length), 0);
  reporters.onRunStart({ total, suites: suiteCount, files: files.length, root: config.root, startedAt: startedAt.toISOString() });
  const control = runController(config, interrupt);
  // A resumed run goes on in the directory of the run it resumes; any other run gets a new one in the history.
  const { dir: runDir, resumed } = openRun(config.outputDir, { resume: config.resume, keep: config.keepRuns, now: startedAt });
  try {
    const finished = resumed ? finishedRollouts(readJournal(runDir)) : new Map<string, RolloutRecord>();
    const outputs = new RunOutputs(runDir, resumed, (error, file) => {
      process.stderr.write(
        `rollout-test: cannot write ${file}: ${error.message}\nStopping the run. The journal keeps every rollout written before; once there is room, run again with --resume.\n`,
      );
      control.stop('write-error');
    }, config.prices);
    // merge-reports checks that it was given each shard once (see readJournal).
    if (config.shard) outputs.journal({ type: 'shard', of: config.shard });
    // Rollouts get a moment to stop on their own; a thread stuck in a loop is then terminated with its pool.
    let cancelGrace: NodeJS.Timeout | undefined;
    const endWorkers = () => void (options.keepPool ? pool.recycle() : pool.close());
    control.signal.addEventListener('abort', () => (cancelGrace = setTimeout(endWorkers, CANCEL_GRACE_MS).unref()), { once: true });
    const models = new ModelEndpoints(config);
    // The grace for late faults starts as the run's last rollout settles: the suites' reports and the run's statistics
    // are built during it, unless the rollouts ran on this thread (--inline, see below).
    const graceDuringReports = options.remote !== undefined || !config.inline;
    // Remote rollouts' grace is their workers' (see RunWorker.closeLateFaults): the remote's lateFaults waits for it.
    const grace = () => (options.remote ? Promise.resolve() : sleep(LATE_FAULT_GRACE_MS));
    let lateFaultGrace: Promise<void> | undefined;
    const startGrace = () => void (lateFaultGrace ??= grace());
    let unsettledSuites = files.reduce((sum, f) => sum + (f.loadError ? 0 : f.suites.length), 0);
    const lateFaults = new LateFaults();
    const budget = config.budget && new RunBudget(config.budget, config.prices);
    const inputs = new RunInputs();
    let budgetSkipped = 0;
    const stopHearing = hearLateFaults(pool, config.inline, (fault) => lateFaults.add(fault));
    const ctx: RunContext = {
      lateFaults,
      config,
      pool,
      models,
      modelCache: resolveModelCache(config.modelCache, { outputDir: config.outputDir, cwd: config.root }),
      outputs,
      runDir,
      finished,
      signal: control.signal,
      remote: options.remote,
      budget,
      inputs,
      onRecord: (record) => {
        budget?.add(record.usage);
        if (record.skipReason === 'budget') budgetSkipped++;
        control.onRecord(record);
        reporters.onRolloutResult(record);
      },
      onRolloutsSettled: () => {
        if (--unsettledSuites === 0 && graceDuringReports) startGrace();
      },
    };
    const verdicts = verdictOptions(config);
    const finishSuite = (report: SuiteReport) => {
      if (report.rowsInOtherShards) return report;
      const compared = baseline ? compareSuite(report, baseline, verdicts) : report;
      reporters.onSuiteEnd(compared);
      return compared;
    };
    let suites: SuiteReport[];
    let totals: RunTotals;
    let nothingRan = nothingMatched;
    let closing: Promise<unknown> = Promise.resolve();
    try {
      // Suites run side by side (each within its own concurrency limit), as Vitest runs files; the report keeps
      // the order of the files and of the suites in them.
      suites = await Promise.all(
        files.flatMap((file) => [
          ...(file.loadError ? [Promise.resolve(finishSuite(failedReport(file.file, undefined, file.loadError, config)))] : []),
          ...file.suites.map((suite) => {
            const planned = counts.get(suiteKey(file.file, suite.name));
            const key = suiteIdPrefix(config.root, file.file, suite.name);
            const rollouts = planned instanceof Error ? undefined : planned?.rollouts;
            const event = { name: suite.name, file: file.file, key, rollouts, passThreshold: passThresholdOf(config, suite) };
            reporters.onSuiteStart(event);
            return reportOf(runOne(file.file, suite, ctx), file.file, suite.name, config).then(finishSuite);
          }),
        ]),
      );
      // A rollout's timer that fires just after the last rollout ended still has its fault heard and reported (by
      // this process's pool, or by the remote workers, which send it at once). Late faults change neither the suites
      // nor the run's statistics: those are computed during the grace, unless the rollouts ran on this thread
      // (--inline): computing them would hold back the event loop, and the grace could end before the I/O callbacks
      // and timers it is there to hear had a turn.
      if (graceDuringReports) startGrace();
      const ran = suites.filter((suite) => !suite.rowsInOtherShards);
      if (ran.length === 0 && suites.length > 0) nothingRan = `--shard ${config.shard!.join('/')} holds none of the rows of the ${suites.length} selected suite${suites.length === 1 ? '' : 's'}`;
      suites = withFlakiness(ran, inputs, config, runDir);
      totals = runTotals(suites, config, runDir, baseline);
    } finally {
      // Every rollout has settled: a kept pool's next run must not lose its workers to this run's cancel.
      clearTimeout(cancelGrace);
      await (lateFaultGrace ?? grace());
      const [busy] = await Promise.all([pool.flush(control.signal), hearRemoteLateFaults(options.remote, lateFaults)]);
      if (busy.length > 0) process.stderr.write(`rollout-test: ${busyAtFlush(busy)}\n`);
      stopHearing();
      // The threads end while the reports are written.
      closing = Promise.all([options.keepPool ? undefined : pool.close(), models.close()]);
    }
    // In the run's order, not as they ended: merge-reports rebuilds the report from these entries.
    for (const { records: _, ...summary } of suites) outputs.journal({ type: 'suite', ...summary });
    for (const fault of lateFaults.late) outputs.journal({ type: 'late-fault', ...fault });
    const unhandledErrors = unhandled.forReport();
    for (const error of unhandledErrors) outputs.journal({ type: 'unhandled-error', ...error });
    const facts = { startedAt: startedAt.toISOString(), durationMs: performance.now() - started, interrupted: control.reason(), noRollouts: nothingRan, lateFaults: lateFaults.late, unhandledErrors, runDir, budget: budget && budgetReport(budget, suites, budgetSkipped) };
    const report = finishRun(suites, facts, config, baseline, totals);
    await outputs.trajectoriesWritten();
    outputs.finish(report);
    await reporters.onRunEnd(report);
    await closing;
    return unhandled.verdict(reporters.verdict(report));
  } finally {
    unmarkInUse(runDir);
  }
}
