import { invalidateModules, trackModuleVersions } from '../../runtime/module-versions.ts';
import { isWithin } from '../../runtime/paths.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { UsageError } from '../errors.ts';
import type { Terminal } from '../reporters/terminal.ts';
import { DEBOUNCE_MS, DirWatcher } from './dir-watcher.ts';
import { CTRL_C, KeyInput } from './keys.ts';
import { IdleCollector } from './idle-gc.ts';
import { helpText, relativeTo, waitingLine } from './messages.ts';
import { addToPlan, mergePlans, modeIn, type RerunPlan } from './plan.ts';
import { ProjectState } from './project-state.ts';
import { importGraph, keepImportGraphService, reachable } from './import-graph.ts';
import { rerun } from './rerun.ts';
import { WatchPool } from './watch-pool.ts';
import { watchedDirs } from './watched-dirs.ts';
import { exitProcess, installFaultHandlers, onUnhandledError } from '../../runtime/faults.ts';
import { endOnToolsOwn, runHearsProcess } from '../run/unhandled-errors.ts';
import { redactUrlCredentials } from '../../runtime/redact.ts';

/** What watch mode needs from the CLI. */
export interface WatchOptions {
  /** Resolves the config; each new `version` imports the config file anew. */
  loadConfig(version: number): Promise<ResolvedConfig>;
  terminal: Terminal;
  stdin: NodeJS.ReadStream;
}

interface Running {
  plan: RerunPlan;
  /** Aborts the whole run: Ctrl-C. */
  controller: AbortController;
  /** One per suite as it starts, so that a change cancels just the suites it touches. */
  suites: Array<{ file: string; suite: string; controller: AbortController }>;
  cancelled?: boolean;
  done: Promise<void>;
}

/**
 * Watch mode: runs everything once, then reruns what each change touches (re-grading when only grader code
 * changed), and answers keys. Resolves with the exit code when the user quits.
 */
export class WatchSession {
  readonly #options: WatchOptions;
  readonly #state = new ProjectState();
  readonly #pool = new WatchPool();
  readonly #idle = new IdleCollector();
  readonly #watcher = new DirWatcher(
    (paths) => void this.#onChanges(paths).catch((error) => this.#fail(error)),
    DEBOUNCE_MS,
    (file) => this.#onChange(file),
  );
  #config!: ResolvedConfig;
  #configVersion = 0;
  /** The config file and the local modules it imports: a change to any of them reloads the config. */
  #configModules = new Set<string>();
  #filters: Partial<Pick<ResolvedConfig, 'fileFilters' | 'namePattern'>> = {};
  #pending: RerunPlan = new Map();
  #triggers: string[] = [];
  #running: Running | undefined;
  #keys: KeyInput | undefined;
  #quit: (code: number) => void = () => {};
  #closed = false;

  constructor(options: WatchOptions) {
    this.#options = options;
  }

  /** Starts watching; resolves with the exit code once the user quits. */
  async start(): Promise<number> {
    // Each save builds import graphs: the service that builds them stays up between saves.
    keepImportGraphService();
    await this.#loadConfig();
    // Before the first load, so that every import of the project's modules is seen.
    await trackModuleVersions(this.#config.root);
    // A fault outside any run (a timer a rollout file starts as it loads, one between reruns) is shown, and watching
    // goes on, as Vitest's watch mode does; a run's own are in its report (see UnhandledErrors).
    installFaultHandlers();
    onUnhandledError((error) => {
      endOnToolsOwn(error);
      if (!runHearsProcess()) this.#fail(`unhandled error outside any run: ${redactUrlCredentials(error.stack ?? error.message)}`);
    });
    const exit = new Promise<number>((resolve) => (this.#quit = resolve));
    this.#keys = new KeyInput(this.#options.stdin, (text) => this.#write(text), (key) => void this.#onKey(key).catch((error) => this.#fail(error)));
    process.on('SIGINT', this.#onSigint);
    await this.#state.refreshFiles(this.#effectiveConfig());
    // Watch before the first run ends, so that a save during it is not missed.
    await this.#watchDirs(this.#effectiveConfig());
    this.#schedule(this.#state.allPlan(), 'all rollout files');
    return exit;
  }

  #effectiveConfig(): ResolvedConfig {
    return { ...this.#config, ...this.#filters };
  }

  #write(text: string): void {
    this.#options.terminal.write(text);
  }

  #fail(error: unknown): void {
    const message = error instanceof UsageError ? error.message : ((error as Error)?.stack ?? String(error));
    this.#write(`\n${this.#options.terminal.colors.red(`rollout-test: ${message}`)}\n`);
  }

  /** Queues a rerun; suites of the current run that the change touches are cancelled (they rerun with it). */
  #schedule(plan: RerunPlan, trigger: string): void {
    if (plan.size === 0) return;
    mergePlans(this.#pending, plan);
    this.#triggers.push(trigger);
    const started = this.#running?.suites ?? [];
    for (const suite of started) {
      if (modeIn(plan, suite.file, suite.suite)) suite.controller.abort();
    }
    // Every suite of the run is cancelled: no rollout needs the workers any more, and the rerun would end them. Ended
    // now, the cancelled rollouts settle at once, rather than once threads still starting have loaded their modules.
    if (started.length > 0 && started.every((suite) => suite.controller.signal.aborted)) this.#pool.markStale(true);
    void this.#drain();
  }

  async #drain(): Promise<void> {
    if (this.#running || this.#pending.size === 0 || this.#closed) return;
    const running: Running = { plan: this.#pending, controller: new AbortController(), suites: [], done: Promise.resolve() };
    const trigger = this.#triggers.join('; ');
    this.#pending = new Map();
    this.#triggers = [];
    this.#running = running;
    running.done = this.#runOnce(running, trigger);
    await running.done;
    this.#running = undefined;
    if (this.#pending.size) return this.#drain();
    // Idle from here on: give memory back before saying so. A change meanwhile starts its rerun at once (the
    // collection is never on its path), and that rerun says when it waits.
    await Promise.all([this.#idle.collect(), this.#pool.idle()]);
    if (!this.#running && !this.#closed) this.#write(waitingLine(this.#options.terminal));
  }

  async #runOnce(running: Running, trigger: string): Promise<void> {
    const config = this.#effectiveConfig();
    try {
      const suiteSignal = (file: string, suite: string) => {
        const controller = new AbortController();
        running.suites.push({ file, suite, controller });
        return controller.signal;
      };
      const pool = await this.#pool.forRun(config.pool);
      await rerun({ config, state: this.#state, plan: running.plan, trigger, terminal: this.#options.terminal, pool, signal: running.controller.signal, suiteSignal });
      await this.#watchDirs(config);
    } catch (error) {
      this.#fail(error);
    } finally {
      // Cancelled rollouts settle at once, but their code may go on (a timer, a model call) on the workers.
      if (running.cancelled || running.suites.some((suite) => suite.controller.signal.aborted)) this.#pool.markStale();
    }
  }

  async #watchDirs(config: ResolvedConfig): Promise<void> {
    this.#watcher.watch(await watchedDirs(config, [...this.#state.files.values()].flat(), this.#configModules));
  }

  /**
   * Whichever file it was (but the runs' own output): the workers' modules may reach it in ways the main thread
   * cannot see (a module only a workflow imports, a file read when a module is evaluated). Heard as the change
   * comes, so that idle workers end while the batch forms, not on the rerun's path.
   */
  #onChange(file: string): void {
    if (!isWithin(file, this.#config.outputDir)) this.#pool.markStale(this.#running === undefined);
  }

  async #onChanges(paths: Set<string>): Promise<void> {
    const { root } = this.#config;
    await invalidateModules(paths);
    if ([...paths].some((file) => this.#configModules.has(file))) return this.#reloadConfig();
    const { added, removed } = await this.#state.refreshFiles(this.#effectiveConfig());
    const plan: RerunPlan = new Map();
    const changed = this.#state.planChanges(paths, plan);
    for (const file of added) addToPlan(plan, file);
    const why = [changed.length && `${relativeTo(root, changed)} changed`, added.length && `new ${relativeTo(root, added)}`];
    if (removed.length) this.#write(`\n${relativeTo(root, removed)} removed: its suites are no longer watched\n`);
    this.#schedule(plan, why.filter(Boolean).join('; '));
  }

  async #loadConfig(): Promise<void> {
    this.#config = await this.#options.loadConfig(this.#configVersion);
    const { configFile, root } = this.#config;
    this.#configModules = configFile ? reachable(await importGraph([configFile], root, 'skip'), [configFile]) : new Set();
  }

  async #reloadConfig(): Promise<void> {
    this.#configVersion++;
    await this.#loadConfig();
    await this.#state.refreshFiles(this.#effectiveConfig());
    this.#schedule(this.#state.allPlan(), 'the config changed: rerunning all');
  }

  async #onKey(key: string): Promise<void> {
    if (key === CTRL_C) return this.#onSigint();
    const actions: Record<string, () => Promise<void> | void> = {
      a: () => this.#schedule(this.#state.allPlan(), 'a: rerun all'),
      f: () => this.#rerunFailed(),
      p: () => this.#askFilter('p'),
      t: () => this.#askFilter('t'),
      h: () => this.#write(helpText(this.#options.terminal)),
      q: () => this.#exit(0),
    };
    const action = actions[key.toLowerCase()];
    if (action) return action();
    this.#write(`Unknown key "${key}": press h for help\n`);
  }

  #rerunFailed(): void {
    const plan = this.#state.failedPlan();
    if (plan.size === 0) this.#write('\nNo failed suites to rerun.\n');
    this.#schedule(plan, 'f: rerun failed');
  }

  /** `p` sets the file filter, `t` the suite name pattern; an empty answer clears it. Then everything reruns. */
  async #askFilter(key: 'p' | 't'): Promise<void> {
    const question = key === 'p' ? 'Filter by file name (empty for all): ' : 'Filter by suite name, a regular expression (empty for all): ';
    const answer = await this.#keys!.prompt(`\n${question}`);
    if (answer === undefined) return;
    if (key === 'p') this.#filters.fileFilters = answer ? [answer] : [];
    else {
      try {
        this.#filters.namePattern = answer ? new RegExp(answer) : undefined;
      } catch (error) {
        return this.#write(`${(error as Error).message}: the filter stays as it was\n`);
      }
    }
    await this.#state.refreshFiles(this.#effectiveConfig());
    this.#schedule(this.#state.allPlan(), `${key === 'p' ? 'file filter' : 'name filter'} ${answer ? `"${answer}"` : 'cleared'}`);
  }

  /** Ctrl-C: cancels the current run (a second one exits at once, 130), or quits when idle. */
  #onSigint = (): void => {
    if (!this.#running) return void this.#exit(130);
    if (this.#running.cancelled) exitProcess(130);
    this.#pending = new Map();
    this.#triggers = [];
    this.#write(`\n${this.#options.terminal.colors.yellow('Cancelling the run. Press Ctrl-C again to exit at once.')}\n`);
    this.#running.cancelled = true;
    this.#running.controller.abort();
  };

  async #exit(code: number): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#watcher.close();
    this.#keys?.close();
    process.off('SIGINT', this.#onSigint);
    this.#running?.controller.abort();
    await this.#running?.done;
    await Promise.all([this.#pool.close(), this.#idle.close()]);
    this.#quit(code);
  }
}
