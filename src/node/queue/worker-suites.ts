import path from 'node:path';
import type { ExecutionBackend } from '../../backends/backend.ts';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import { resolveModelCache } from '../../integrations/recording/model-cache-settings.ts';
import type { ExecutionResult } from '../../model/result.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import { rootRelative } from './checkout-paths.ts';
import { collectSuites } from '../discovery/collect-suites.ts';
import { ModelEndpoints } from '../run/model-endpoints.ts';
import { planSuite } from '../run/plan-suite.ts';
import { suiteIdPrefix } from '../run/request-id.ts';
import type { LateFaults } from '../run/late-faults.ts';
import { executeTracked } from '../run/run-suite.ts';
import { createSuiteBackend } from '../run/suite-backend.ts';
import { suiteSettings } from '../run/suite-settings.ts';
import { type SuiteModules, suiteCode, suiteModules } from './content-hash.ts';
import { PlannedRows } from './planned-rows.ts';
import { setupError } from './setup-results.ts';
import type { EntryHashes, QueuedRollout, RolloutJob } from './queue-names.ts';
import { Refusal, type TrustedFiles, type TrustedRun } from './trusted-files.ts';
import type { ImportGraph } from '../watch/import-graph.ts';

/**
 * The digest of each module file when this process first hashed it, just after a suite's first import of it. Node
 * keeps a module as it was first imported, in this thread and in the pool's, for as long as the process lives,
 * whichever suite imports it later: a worker would serve every later run with that code, whatever the checkout
 * holds by then.
 */
const importedDigests = new Map<string, string>();
/**
 * Modules seen changed since their first import. They stay so: a thread the pool started meanwhile imported the
 * changed file, so once it is changed back, this process holds both versions.
 */
const changedModules = new Set<string>();

/**
 * The modules of each suite this process loaded (by `file\0suite\0config file`), as esbuild found them when it
 * first loaded the suite, and whether a later run found others. Node keeps a module as first imported, but a
 * thread the pool starts later (one replaced after a crash, or an idle one ended) imports the files as they are
 * then: once an import of the suite finds another file (one added or removed since), this process may hold
 * either in its threads, and it refuses the suite until restarted, whatever the checkout holds by then.
 */
const importedSuites = new Map<string, { modules: Set<string>; diverged: boolean }>();

/** Whether a suite's modules differ from those this process first found for it, now or in an earlier run. */
function divergedFromFirstLoad(key: string, { modules, complete }: SuiteModules): boolean {
  const first = importedSuites.get(key);
  // A graph esbuild could not build (a file saved mid-load) is neither recorded nor held against the suite: its
  // code hash then differs from the coordinator's, and the job is refused for this run only.
  if (!complete) return first?.diverged ?? false;
  if (!first) {
    importedSuites.set(key, { modules, diverged: false });
    return false;
  }
  first.diverged ||= modules.size !== first.modules.size || [...modules].some((m) => !first.modules.has(m));
  return first.diverged;
}

/** Whether a module changed on disk since this process imported it, now or in an earlier run; records those it has not seen. */
function changedSinceImported(modules: Map<string, string>): boolean {
  let changed = false;
  for (const [file, digest] of modules) {
    const imported = importedDigests.get(file);
    if (imported === undefined) importedDigests.set(file, digest);
    else if (imported !== digest) changedModules.add(file);
    changed ||= changedModules.has(file);
  }
  return changed;
}

/** A suite as this worker's checkout has it: its backend, and the hashes jobs must match. */
interface LocalSuite {
  backend: ExecutionBackend;
  code: string;
  /** The static hash of its file that this worker matched before it imported the file (see TrustedFiles). */
  entry: string;
  /** The modules changed on disk since this process imported them: it would run the old ones. */
  stale: boolean;
  /** Request id → hash of the dataset row it is made from, as this checkout plans the suite. */
  rows: PlannedRows;
}

/**
 * One run's suites on a worker: its settings resolved from the run's flags against this checkout, each suite
 * loaded, hashed and given a local backend (the worker pool, or harbor trials) on its first job. What it imports
 * is what TrustedFiles allows, nothing else.
 */
export class WorkerSuites {
  /** By `file\0suite`, the file relative to the root as jobs name it. */
  readonly #suites = new Map<string, Promise<LocalSuite>>();
  #models: ModelEndpoints | undefined;
  /** Settles once the suites preloaded (see preload) are loading. */
  #prepared: Promise<void> | undefined;

  constructor(
    private readonly trusted: TrustedFiles,
    private readonly pool: WorkerPool,
    private readonly worker: string,
  ) {}

  /**
   * Loads the suites the run's filters select in this checkout once the announcement tells the hashes its jobs
   * will carry, while the coordinator plans the run: the first jobs find them loaded, and the threads have imported
   * the files. Only the first call counts. Best effort: a file that fails here is loaded again, and refused with its
   * error, when a job names it.
   */
  preload(hashes: EntryHashes): void {
    this.#prepared ??= this.#prepare(hashes).catch(() => undefined);
  }

  /**
   * Runs a rollout of a job and resolves with its final result; a rollout this checkout cannot run is refused,
   * never run otherwise. A fault of its code that `faults` hears before its result fails it, as in a local run.
   */
  async run(job: RolloutJob, rollout: QueuedRollout, signal: AbortSignal, faults: LateFaults): Promise<ExecutionResult> {
    let local: LocalSuite;
    try {
      // Checked first: a suite may not even load on another Node, and its error would hide why.
      if (job.node !== process.version) {
        throw new Refusal(`it runs Node ${process.version}, the coordinator Node ${job.node}: run the workers on the coordinator's Node`);
      }
      local = await this.#suite(await this.#open(job.config), job);
      await this.#check(job, rollout, local);
    } catch (error) {
      const why = error instanceof Refusal ? `refused rollout ${rollout.request.id}: ${error.message}` : `could not set up suite "${job.suite}": ${(error as Error).message}`;
      return setupError(rollout.request.id, `worker ${this.worker} ${why}`);
    }
    let final!: ExecutionResult;
    await executeTracked(local.backend, rollout.request, signal, faults, (result) => (final = result));
    return final;
  }

  async #open(configHash: string | null): Promise<TrustedRun> {
    const run = await this.trusted.run(configHash);
    this.#models ??= new ModelEndpoints(run.config);
    return run;
  }

  async #check(job: RolloutJob, { request, row }: QueuedRollout, local: LocalSuite): Promise<void> {
    const differs = "its checkout differs from the coordinator's";
    if (local.stale) {
      throw new Refusal(
        `${job.file}, a module it imports or the config changed after this worker imported them (or a package they import changed version, or an import of them now finds another file), and Node cannot unload a module: restart the worker to serve the checkout as it is now`,
      );
    }
    if (local.code !== job.code || local.entry !== job.entry) {
      throw new Refusal(
        `${differs}: ${job.file}, the modules it imports (workspace packages included), the versions of the packages they import or of rollout-test, the config or the task (code ${local.code} here, ${job.code} there)`,
      );
    }
    const here = await local.rows.hashOf(request.id);
    if (here !== row) {
      throw new Refusal(`${differs}: the dataset row of suite "${job.suite}" (${here ? `row ${here} here` : 'no such row here'}, ${row} there)`);
    }
  }

  async #prepare(hashes: EntryHashes): Promise<void> {
    const run = await this.#open(hashes.config);
    const { root, inline, namePattern } = run.config;
    const matching = async (file: string) => {
      const hash = hashes.files[rootRelative(root, file)];
      return hash !== undefined && (await this.trusted.rolloutFile(run, file, hash).then(() => true, () => false));
    };
    const files = [...run.files];
    const checked = await Promise.all(files.map(matching));
    const paths = files.filter((_, i) => checked[i]);
    if (!inline) this.pool.preload(paths);
    for (const { file, suites, loadError } of await collectSuites(paths, namePattern)) {
      if (loadError) continue;
      for (const suite of suites) this.#remember(`${rootRelative(root, file)}\0${suite.name}`, this.#build(run, file, suite, hashes.files[rootRelative(root, file)]!));
    }
  }

  async #suite(run: TrustedRun, job: RolloutJob): Promise<LocalSuite> {
    await this.#prepared;
    const file = path.resolve(run.config.root, job.file);
    const key = `${rootRelative(run.config.root, file)}\0${job.suite}`;
    const local = this.#suites.get(key);
    if (local) return local;
    // Refused before the import, the file is not remembered: a job of the run that names it rightly still may load it.
    const graph = await this.trusted.rolloutFile(run, job.file, job.entry);
    return this.#suites.get(key) ?? this.#remember(key, this.#load(run, file, job, graph));
  }

  #remember(key: string, local: Promise<LocalSuite>): Promise<LocalSuite> {
    local.catch(() => undefined);
    this.#suites.set(key, local);
    return local;
  }

  async #load(run: TrustedRun, file: string, job: RolloutJob, graph: ImportGraph): Promise<LocalSuite> {
    const [collected] = await collectSuites([file], undefined);
    // Node keeps a failed import's error for the module, as it keeps a module: only a new process loads it anew.
    if (collected?.loadError) throw new Error(`${collected.loadError.message} (once the file is fixed, restart the worker: it keeps what it first imported, a failed import too)`);
    const suite = collected?.suites.find((s) => s.name === job.suite);
    if (!suite) throw new Refusal(`${job.file} declares no suite "${job.suite}" in its checkout`);
    return this.#build(run, file, suite, job.entry, Promise.resolve(graph));
  }

  /** A loaded suite's hashes and backend. */
  async #build(run: TrustedRun, file: string, suite: RolloutSuite<any, any>, entry: string, graph?: Promise<ImportGraph>): Promise<LocalSuite> {
    const { config } = run;
    const settings = suiteSettings(suite, config);
    const idPrefix = suiteIdPrefix(config.root, file, suite.name);
    const rows = new PlannedRows(planSuite({ file, suite, settings, config, idPrefix }));
    const [{ found, code, modules }, backend] = await Promise.all([
      suiteModules(file, suite, config, graph).then(async (found) => ({ found, ...(await suiteCode(file, settings, config, found)) })),
      this.#models!.urlFor(suite, file).then((chatCompletionsUrl) =>
        createSuiteBackend({
          file,
          suite,
          settings,
          config,
          pool: this.pool,
          chatCompletionsUrl,
          modelCache: resolveModelCache(config.modelCache, { outputDir: config.outputDir, cwd: config.root }),
          // A worker's trials and artifacts go under the run's output dir as the coordinator names it, on the worker's machine.
          runDir: config.outputDir,
        }),
      ),
    ]);
    const key = `${file}\0${suite.name}\0${config.configFile ?? ''}`;
    return { backend, code, entry, rows, stale: changedSinceImported(modules) || divergedFromFirstLoad(key, found) };
  }

  async close(): Promise<void> {
    await this.#prepared;
    const suites = await Promise.allSettled(this.#suites.values());
    await Promise.all(suites.map((s) => (s.status === 'fulfilled' ? s.value.backend.close() : undefined)));
    await this.#models?.close();
  }
}
