import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ExecutionBackend } from '../../backends/backend.ts';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import { resolveModelCache } from '../../integrations/recording/model-cache-settings.ts';
import type { ExecutionResult } from '../../model/result.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { CliOptions } from '../config/cli-options.ts';
import { findConfigFile, loadUserConfig } from '../config/load-config.ts';
import { checkoutFlags, insideCheckout } from './checkout-paths.ts';
import { type ResolvedConfig, resolveConfig } from '../config/resolve-config.ts';
import { collectSuites } from '../discovery/collect-suites.ts';
import { findRolloutFiles } from '../discovery/find-rollout-files.ts';
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
import type { QueuedRollout, RolloutJob } from './queue-names.ts';

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
  /** The modules changed on disk since this process imported them: it would run the old ones. */
  stale: boolean;
  /** Request id → hash of the dataset row it is made from, as this checkout plans the suite. */
  rows: PlannedRows;
}

/** A job this worker will not run: its result is an error in setup that says why. */
class Refusal extends Error {}

/**
 * One run's suites on a worker: its settings resolved from the run's flags against this checkout, each suite
 * loaded, hashed and given a local backend (the worker pool, or harbor trials) on its first job.
 */
export class WorkerSuites {
  /** By `file\0suite`, the file relative to the root as jobs name it. */
  readonly #suites = new Map<string, Promise<LocalSuite>>();
  readonly #models: ModelEndpoints;

  /** Settles once the suites the run's filters select here are loading (see #prepare). */
  readonly #prepared: Promise<void>;

  private constructor(
    private readonly config: ResolvedConfig,
    private readonly pool: WorkerPool,
    private readonly worker: string,
    preload: boolean,
  ) {
    this.#models = new ModelEndpoints(config);
    this.#prepared = preload ? this.#prepare().catch(() => undefined) : Promise.resolve();
  }

  /**
   * The run's flags resolved against this root. The worker's `--concurrency` stands in for a suite
   * concurrency nobody set (a suite's own limit holds on each worker). With `preload`, the suites the run selects
   * load at once (see #prepare); without, only as a job names them.
   */
  static async open(cli: CliOptions, root: string, concurrency: number, pool: WorkerPool, worker: string, preload: boolean): Promise<WorkerSuites> {
    const flags = checkoutFlags(cli, root);
    const configFile = findConfigFile(root, flags.config);
    const user = await loadUserConfig(configFile);
    const config = resolveConfig(flags, { ...user, concurrency: user.concurrency ?? concurrency }, root, configFile, []);
    return new WorkerSuites(config, pool, worker, preload);
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
        throw new Refusal(`worker ${this.worker} refused rollout ${rollout.request.id}: it runs Node ${process.version}, the coordinator Node ${job.node}: run the workers on the coordinator's Node`);
      }
      local = await this.#suite(job.file, job.suite);
      await this.#check(job, rollout, local);
    } catch (error) {
      const why = error instanceof Refusal ? error.message : `worker ${this.worker} could not set up suite "${job.suite}": ${(error as Error).message}`;
      return setupError(rollout.request.id, why);
    }
    let final!: ExecutionResult;
    await executeTracked(local.backend, rollout.request, signal, faults, (result) => (final = result));
    return final;
  }

  async #check(job: RolloutJob, { request, row }: QueuedRollout, local: LocalSuite): Promise<void> {
    const differs = `worker ${this.worker} refused rollout ${request.id}: its checkout differs from the coordinator's`;
    if (local.stale) {
      throw new Refusal(
        `worker ${this.worker} refused rollout ${request.id}: ${job.file}, a module it imports or the config changed after this worker imported them (or a package they import changed version, or an import of them now finds another file), and Node cannot unload a module: restart the worker to serve the checkout as it is now`,
      );
    }
    if (local.code !== job.code) {
      throw new Refusal(
        `${differs}: ${job.file}, the modules it imports (workspace packages included), the versions of the packages they import or of rollout-test, the config or the task (code ${local.code} here, ${job.code} there)`,
      );
    }
    const here = await local.rows.hashOf(request.id);
    if (here !== row) {
      throw new Refusal(`${differs}: the dataset row of suite "${job.suite}" (${here ? `row ${here} here` : 'no such row here'}, ${row} there)`);
    }
  }

  /**
   * Loads the suites the run's filters select in this checkout as soon as the run is announced, while the
   * coordinator plans it: the first jobs find them loaded, and the threads have imported the files. Best effort:
   * a file that fails here is loaded again, and refused with its error, when a job names it.
   */
  async #prepare(): Promise<void> {
    const { root, include, exclude, fileFilters, namePattern, inline } = this.config;
    const paths = await findRolloutFiles(root, include, exclude, fileFilters);
    if (!inline) this.pool.preload(paths);
    for (const { file, suites, loadError } of await collectSuites(paths, namePattern)) {
      if (loadError) continue;
      const relative = path.relative(root, file).split(path.sep).join('/');
      for (const suite of suites) this.#remember(`${relative}\0${suite.name}`, this.#build(file, suite));
    }
  }

  async #suite(file: string, name: string): Promise<LocalSuite> {
    await this.#prepared;
    const key = `${file}\0${name}`;
    const local = this.#suites.get(key);
    if (local) return local;
    return this.#remember(
      key,
      insideCheckout(this.config.root, file)
        ? this.#load(path.resolve(this.config.root, file), name)
        : Promise.reject(new Refusal(`worker ${this.worker} refused: ${file} is outside its checkout (--root ${this.config.root})`)),
    );
  }

  #remember(key: string, local: Promise<LocalSuite>): Promise<LocalSuite> {
    local.catch(() => undefined);
    this.#suites.set(key, local);
    return local;
  }

  async #load(file: string, name: string): Promise<LocalSuite> {
    if (!existsSync(file)) throw new Refusal(`worker ${this.worker} refused: ${file} does not exist in its checkout (--root ${this.config.root})`);
    const [collected] = await collectSuites([file], undefined);
    // Node keeps a failed import's error for the module, as it keeps a module: only a new process loads it anew.
    if (collected?.loadError) throw new Error(`${collected.loadError.message} (once the file is fixed, restart the worker: it keeps what it first imported, a failed import too)`);
    const suite = collected?.suites.find((s) => s.name === name);
    if (!suite) throw new Refusal(`worker ${this.worker} refused: ${file} declares no suite "${name}" in its checkout`);
    return this.#build(file, suite);
  }

  /** A loaded suite's hashes and backend. */
  async #build(file: string, suite: RolloutSuite<any, any>): Promise<LocalSuite> {
    const settings = suiteSettings(suite, this.config);
    const idPrefix = suiteIdPrefix(this.config.root, file, suite.name);
    const rows = new PlannedRows(planSuite({ file, suite, settings, config: this.config, idPrefix }));
    const [{ found, code, modules }, backend] = await Promise.all([
      suiteModules(file, suite, this.config).then(async (found) => ({ found, ...(await suiteCode(file, settings, this.config, found)) })),
      this.#models.urlFor(suite, file).then((chatCompletionsUrl) =>
        createSuiteBackend({
          file,
          suite,
          settings,
          config: this.config,
          pool: this.pool,
          chatCompletionsUrl,
          modelCache: resolveModelCache(this.config.modelCache, { outputDir: this.config.outputDir, cwd: this.config.root }),
          // A worker's trials and artifacts go under the run's output dir as the coordinator names it, on the worker's machine.
          runDir: this.config.outputDir,
        }),
      ),
    ]);
    const key = `${file}\0${suite.name}\0${this.config.configFile ?? ''}`;
    return { backend, code, rows, stale: changedSinceImported(modules) || divergedFromFirstLoad(key, found) };
  }

  async close(): Promise<void> {
    await this.#prepared;
    const suites = await Promise.allSettled(this.#suites.values());
    await Promise.all(suites.map((s) => (s.status === 'fulfilled' ? s.value.backend.close() : undefined)));
    await this.#models.close();
  }
}
