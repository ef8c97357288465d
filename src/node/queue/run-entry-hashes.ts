import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { ImportGraph } from '../watch/import-graph.ts';
import { rootRelative } from './checkout-paths.ts';
import { configHash, entryHash } from './content-hash.ts';
import type { EntryHashes } from './queue-names.ts';

/**
 * A coordinator's side of what workers match before they import a run's files: each rollout file's import graph
 * (which its code hash reuses), and the static hash of the local modules it imports and of the config file's.
 */
export class RunEntryHashes {
  readonly #files = new Map<string, Promise<{ graph: ImportGraph; hash: string }>>();
  #config: Promise<string | null> | undefined;

  constructor(private readonly config: ResolvedConfig) {}

  /** Starts the graphs of the files discovery found: esbuild's process builds them while this one loads the files. */
  found(paths: string[]): void {
    for (const file of paths) this.#of(file);
  }

  async graph(file: string): Promise<ImportGraph> {
    return (await this.#of(file)).graph;
  }

  async entry(file: string): Promise<string> {
    return (await this.#of(file)).hash;
  }

  configHash(): Promise<string | null> {
    this.#config ??= configHash(this.config.configFile, this.config.root);
    return this.#config;
  }

  /** Every hash of the files found so far: what the run's announcement tells the workers. */
  async all(): Promise<EntryHashes> {
    const files = await Promise.all([...this.#files].map(async ([file, found]) => [rootRelative(this.config.root, file), (await found).hash] as const));
    return { config: await this.configHash(), files: Object.fromEntries(files) };
  }

  #of(file: string): Promise<{ graph: ImportGraph; hash: string }> {
    let found = this.#files.get(file);
    if (!found) this.#files.set(file, (found = entryHash(file, this.config)));
    return found;
  }
}
