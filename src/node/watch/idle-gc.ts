import type { Session } from 'node:inspector';

/**
 * Gives memory back while watch mode sits idle between saves: a full, memory-reducing collection of the main
 * thread's heap after each rerun. Nothing of a rerun stays reachable once it ended (the heap after a collection
 * grows only by the modules Node cannot unload, ~40 KB a save), but V8 collects the rest only under allocation
 * pressure: without this the young generation grew from 16 to 32 MB and promoted garbage piled up in old
 * space, +24–33 MB of RSS over 50 saves (bench/RESULTS.md, W1). A watcher allocates nothing while it waits, so
 * the heap V8 sized for the last rerun would stay as it is until the next one.
 *
 * The handle is the inspector's `HeapProfiler.collectGarbage` on an in-process session (no port is opened):
 * V8's low-memory collection, which also shrinks the young generation and releases unused pages, where a plain
 * `gc()` keeps them. It needs no `--expose-gc`, so no `gc` global reaches the user's code or the workers (a
 * `v8.setFlagsFromString('--expose-gc')` would reach every context created after it, a worker's included).
 * It costs two full collections, ~40 ms of main-thread CPU a rerun on a loaded 2-core machine, spent after the
 * results are printed; the next rerun's scavenges cost the same as without it (the young generation regrows in
 * more, cheaper ones). A Node built without the inspector just skips it.
 */
export class IdleCollector {
  #closed = false;
  #collecting: Promise<void> | undefined;

  /** Resolves once the main thread's heap was collected; a closed collector does nothing. */
  collect(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#collecting ??= collectOnce().finally(() => {
      this.#collecting = undefined;
    });
    return this.#collecting;
  }

  /** The watcher quits: waits for a collection under way, and starts no other. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#collecting;
  }
}

/**
 * One session per collection, disconnected right after it: while a session is connected, V8 keeps every
 * `console.*` message of the main thread and the objects it was given (up to 1,000) for the inspector, which
 * would hold a rerun's logged objects and delay the user's finalizers for the whole watch. The disconnect waits
 * for the next turn because disconnecting inside the callback of `post` hangs Node 20.
 */
async function collectOnce(): Promise<void> {
  const session = await connect();
  if (!session) return;
  await new Promise<void>((resolve) => {
    session.post('HeapProfiler.collectGarbage', () => {
      setImmediate(() => {
        session.disconnect();
        resolve();
      });
    });
  });
}

async function connect(): Promise<Session | undefined> {
  try {
    const { Session } = await import('node:inspector');
    const session = new Session();
    session.connect();
    return session;
  } catch {
    return undefined;
  }
}
