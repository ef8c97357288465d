import { type FSWatcher, watch } from 'node:fs';
import path from 'node:path';

/** How long changes must be quiet before they are handed over as one batch (Vitest's default). */
export const DEBOUNCE_MS = 100;

/**
 * Watches a set of directories, each on its own (not recursively: Node 20's recursive `fs.watch` on Linux
 * walks every subdirectory, node_modules included), and hands over the paths that changed in debounced
 * batches. Watching directories rather than files also sees editors that save by renaming a new file over
 * the old one, and files that are created or deleted.
 */
export class DirWatcher {
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #pending = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param onBatch hears each debounced batch of changed paths.
   * @param onEvent hears each change as it comes, before the batch: for work that can start while the batch forms.
   */
  constructor(
    private readonly onBatch: (paths: Set<string>) => void,
    private readonly debounceMs = DEBOUNCE_MS,
    private readonly onEvent: (file: string) => void = () => {},
  ) {}

  /** Watches exactly these directories from now on; a directory that cannot be watched (gone) is skipped. */
  watch(dirs: Iterable<string>): void {
    const wanted = new Set(dirs);
    for (const [dir, watcher] of this.#watchers) if (!wanted.has(dir)) this.#stop(dir, watcher);
    for (const dir of wanted) if (!this.#watchers.has(dir)) this.#start(dir);
  }

  #start(dir: string): void {
    try {
      const watcher = watch(dir, { persistent: true }, (_event, name) => this.#changed(name ? path.join(dir, name.toString()) : dir));
      watcher.on('error', () => this.#stop(dir, watcher));
      this.#watchers.set(dir, watcher);
    } catch {
      // Deleted between listing and watching: its parent's watcher reports the deletion.
    }
  }

  #stop(dir: string, watcher: FSWatcher): void {
    watcher.close();
    this.#watchers.delete(dir);
  }

  #changed(file: string): void {
    this.onEvent(file);
    this.#pending.add(file);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      const batch = new Set(this.#pending);
      this.#pending.clear();
      this.onBatch(batch);
    }, this.debounceMs);
  }

  close(): void {
    clearTimeout(this.#timer);
    for (const [dir, watcher] of this.#watchers) this.#stop(dir, watcher);
  }
}
