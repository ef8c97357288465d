import path from 'node:path';
import type { ModelCacheSettings } from '../../runtime/rollout-context.ts';

/** Where `--model-cache` stores calls when no directory is given: inside the run's output directory. */
export const MODEL_CACHE_DIR = 'model-cache';

/**
 * Turns the CLI's `--model-cache record|replay` (and an optional directory) into the settings that
 * `LocalBackend({ modelCache })` hands to every rollout; `undefined` when the flag is absent.
 * A relative `dir` resolves from `cwd`; by default the store is `<outputDir>/model-cache`.
 * Throws a RangeError naming the accepted values for any other mode.
 */
export function resolveModelCache(
  mode: string | undefined,
  options: { outputDir: string; dir?: string; cwd?: string },
): ModelCacheSettings | undefined {
  if (mode === undefined) return undefined;
  if (mode !== 'record' && mode !== 'replay') {
    throw new RangeError(`--model-cache must be "record" or "replay", got "${mode}"`);
  }
  const dir = options.dir ?? path.join(options.outputDir, MODEL_CACHE_DIR);
  return { mode, dir: path.resolve(options.cwd ?? process.cwd(), dir) };
}
