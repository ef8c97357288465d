import { fileURLToPath } from 'node:url';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import { CODE_URL } from '../../package-files.ts';
import { exitProcess, installFaultHandlers, onUnhandledError, type UnhandledError } from '../../runtime/faults.ts';
import type { RunReport } from '../types/run-report.ts';

const CODE_DIR = fileURLToPath(CODE_URL);
/** Where a stack frame points: `at f (where:1:2)` or `at where:1:2`. */
const FRAME = /^\s+at (?:.*\((.*)\)|(.*))$/;

/**
 * Whether a stack is rollout-test's own alone: each frame in its code or Node's, one at least in its code. Thrown
 * there, outside any rollout, it is a defect of the tool, whose state may be broken: the run ends as it did before
 * these were heard (exit 1, the stack on stderr) rather than go on and maybe hang. A frame of the user's code or of
 * another package (an SDK's timer) makes it the run's unhandled error.
 */
export function toolsOwn(stack: string | undefined): boolean {
  const places = (stack ?? '').split('\n').flatMap((line) => {
    const match = FRAME.exec(line);
    return match ? [match[1] ?? match[2] ?? ''] : [];
  });
  const ours = (place: string) => place.startsWith(CODE_URL) || place.startsWith(CODE_DIR);
  return places.some(ours) && places.every((place) => ours(place) || place.startsWith('node:'));
}

/**
 * A run's faults outside any rollout (see UnhandledError): those of the pool's threads, and those of this thread,
 * whose fault handlers are installed before the rollout files load and stay until the run returns. A rollout file's
 * timer that threw here crashed the process with no report (exit 1), and passed the run when it threw on a thread
 * or with `--inline`. Each fails the run now, which goes on and writes its reports; one that comes after the
 * report was made is written to stderr, and the run still exits 1.
 */
export class UnhandledErrors {
  readonly #heard: UnhandledError[] = [];
  /** How many were heard when the report took them; none until then. */
  #reported: number | undefined;
  readonly #stops: (() => void)[];

  constructor(pool: Pick<WorkerPool, 'onUnhandledError'>) {
    const hear = (origin: UnhandledError['origin']) => (error: UnhandledError) => {
      if (origin === 'main' && toolsOwn(error.stack)) {
        process.stderr.write(`rollout-test: internal error: ${error.stack}\n`);
        exitProcess(1);
      }
      this.#hear({ ...error, origin });
    };
    this.#stops = [installFaultHandlers(), onUnhandledError(hear('main')), pool.onUnhandledError(hear('worker'))];
  }

  #hear(error: UnhandledError): void {
    this.#heard.push(error);
    if (this.#reported !== undefined) process.stderr.write(`rollout-test: after the run's report was made: ${error.stack ?? error.message}\n`);
  }

  /** The errors heard so far, for the report. */
  forReport(): UnhandledError[] {
    this.#reported = this.#heard.length;
    return this.#heard.slice();
  }

  /** The run's verdict, failed by an error heard after the report was made. */
  verdict(report: RunReport): RunReport {
    return this.#heard.length > (this.#reported ?? 0) && report.exitCode === 0 ? { ...report, exitCode: 1 } : report;
  }

  stop(): void {
    for (const stop of this.#stops) stop();
  }
}
