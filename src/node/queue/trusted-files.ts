import path from 'node:path';
import { isWithin } from '../../runtime/paths.ts';
import type { CliOptions } from '../config/cli-options.ts';
import { findConfigFile, loadUserConfig } from '../config/load-config.ts';
import { type ResolvedConfig, resolveConfig } from '../config/resolve-config.ts';
import { findRolloutFiles } from '../discovery/find-rollout-files.ts';
import type { ImportGraph } from '../watch/import-graph.ts';
import { checkoutFlags, rootRelative } from './checkout-paths.ts';
import { configHash, entryHash } from './content-hash.ts';

/** What a worker will not run or import: the rollouts it concerns end as errors in setup that say why. */
export class Refusal extends Error {}

/** A run as this worker serves it: its settings from the checkout's own config file, and the rollout files found. */
export interface TrustedRun {
  config: ResolvedConfig;
  /** The rollout files the worker's own discovery finds (absolute): the only ones a job may name. */
  files: Set<string>;
}

/**
 * What a worker may import of a run. A job or a run announcement is anyone's who can write to Redis: a path in it
 * is data, never code to run. The worker imports only its checkout's own config file, as its config discovery
 * finds it, and the rollout files its own discovery finds (the config's include and exclude, never under an output
 * directory); each only once the hash of the local modules it imports statically (esbuild, which runs nothing)
 * equals the one the job or announcement carries. A script beside the rollout files, a file an agent wrote under
 * `.rollouts/`, or a rollout file edited on this machine is refused before any of it runs.
 */
export class TrustedFiles {
  readonly #configFile: string | undefined;
  readonly #flags: CliOptions | Refusal;
  readonly #configHash: Promise<string | null>;
  #run: Promise<TrustedRun> | undefined;
  readonly #entries = new Map<string, Promise<{ graph: ImportGraph; hash: string }>>();

  constructor(
    cli: CliOptions,
    private readonly root: string,
    private readonly concurrency: number,
  ) {
    this.#configFile = findConfigFile(root);
    // Started at once (it runs nothing): the hashes the run's jobs carry come soon after its announcement.
    this.#configHash = configHash(this.#configFile, root);
    this.#configHash.catch(() => undefined);
    try {
      this.#flags = checkoutFlags(cli, root, this.#configFile);
    } catch (error) {
      this.#flags = new Refusal((error as Error).message);
    }
  }

  /** Why every rollout of the run is refused here, whatever its job says; undefined when none is. */
  get refused(): string | undefined {
    return this.#flags instanceof Refusal ? this.#flags.message : undefined;
  }

  /** The run's settings, once `hash` (from the announcement or a job) matches this checkout's config file. */
  async run(hash: string | null): Promise<TrustedRun> {
    if (this.#flags instanceof Refusal) throw this.#flags;
    const flags = this.#flags;
    const here = await this.#configHash;
    if (here !== hash) {
      const file = this.#configFile ? rootRelative(this.root, this.#configFile) : 'no config file';
      throw new Refusal(`its checkout differs from the coordinator's: the config (${file}) or the modules it imports (hash ${here ?? 'none'} here, ${hash ?? 'none'} there)`);
    }
    this.#run ??= this.#open(flags);
    return this.#run;
  }

  /** The import graph of a rollout file that a job names: one the run's discovery found, whose hash is `hash`. */
  async rolloutFile(run: TrustedRun, file: string, hash: string): Promise<ImportGraph> {
    const absolute = path.resolve(this.root, file);
    if (!run.files.has(absolute)) {
      throw new Refusal(`${file} is no rollout file of its checkout (--root ${this.root}: the config's include and exclude, outside the output directory)`);
    }
    let entry = this.#entries.get(absolute);
    if (!entry) this.#entries.set(absolute, (entry = entryHash(absolute, run.config)));
    const here = await entry;
    if (here.hash !== hash) throw new Refusal(`its checkout differs from the coordinator's: ${file}, the modules it imports statically (hash ${here.hash} here, ${hash} there)`);
    return here.graph;
  }

  async #open(flags: CliOptions): Promise<TrustedRun> {
    const user = await loadUserConfig(this.#configFile);
    const config = resolveConfig(flags, { ...user, concurrency: user.concurrency ?? this.concurrency }, this.root, this.#configFile, []);
    // The run names its output directory; the checkout's own is never a source of code either.
    const outputs = [config.outputDir, path.resolve(this.root, user.outputDir ?? '.rollouts')];
    const found = await findRolloutFiles(this.root, config.include, config.exclude, []);
    return { config, files: new Set(found.filter((file) => !outputs.some((dir) => isWithin(file, dir)))) };
  }
}
