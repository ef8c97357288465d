import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ComparisonSide } from '../baseline/baseline-store.ts';
import { loadBaseline } from '../baseline/comparison-side.ts';
import { UsageError } from '../errors.ts';
import { runToResume } from '../output/run-history.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';

/** What the checks made before a run found: the baseline to compare with, read once. */
export interface Preflight {
  baseline: ComparisonSide | undefined;
}

/**
 * Checks, before any rollout runs, what would otherwise fail only after all of them ran: that the output
 * directory and the report files' directories can be written, that `--baseline` can be read, and that the run
 * `--resume` names is not running still.
 */
export function preflight(config: ResolvedConfig): Preflight {
  checkWritable(config.outputDir, 'the output directory (--outputDir)');
  for (const { name, outputFile } of config.reporters) {
    if (outputFile) checkWritable(path.dirname(outputFile), `the directory of the ${name} report (--outputFile)`);
  }
  // Before the worker threads start: a run still running elsewhere is not resumed (the run checks again as it opens it).
  if (config.resume) runToResume(config.outputDir);
  // Before this run's directory exists: `previous` is the newest run of the history.
  const baseline = config.baseline ? loadBaseline(config.baseline, config, undefined) : undefined;
  return { baseline };
}

const WHY: Record<string, string> = {
  EROFS: 'it is on a read-only file system',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a file stands where a directory should be',
  EEXIST: 'a file stands where a directory should be',
  ENOSPC: 'no space left on the device',
};

/** Creates `dir` and a file in it, then removes the file: the only test a read-only mount or root cannot fool. */
function checkWritable(dir: string, what: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    const probe = path.join(dir, `.rollout-test-write-check-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why = (code && WHY[code]) ?? message;
    throw new UsageError(`${what} ${dir} cannot be written: ${why} (${code ?? 'error'}); choose another one or fix its permissions`);
  }
}
