import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import { PACKAGE_ROOT } from '../../package-files.ts';
import { exitProcess, installFaultHandlers, onUnhandledError, type UnhandledError } from '../../runtime/faults.ts';
import { redactError, redactUrlCredentials } from '../../runtime/redact.ts';
import type { RunReport } from '../types/run-report.ts';

/**
 * Where rollout-test's own frames point, as paths and as URLs: its built code, and its sources, which a built frame
 * names once source maps are on (a TypeScript rollout file turns them on).
 */
const OWN_PLACES = ['dist', 'src'].flatMap((dir) => {
  const own = path.join(PACKAGE_ROOT, dir) + path.sep;
  return [own, pathToFileURL(own).href];
});
/** Where a stack frame points: `at f (where:1:2)` or `at where:1:2`. */
const FRAME = /^\s+at (?:.*\((.*)\)|(.*))$/;
/** A frame's place that is a file: built-ins' (`<anonymous>`, `index 0`, `native`) are nobody's. */
const FILE = /^(?:file:|node:|\/|[A-Za-z]:\\)/;

/**
 * Whether a stack is rollout-test's own alone: each frame in its code or Node's, one at least in its code. Thrown
 * there, outside any rollout, it is a defect of the tool, whose state may be broken: the run ends as it did before
 * these were heard (exit 1, the stack on stderr) rather than go on and maybe hang. A frame of the user's code or of
 * another package (an SDK's timer) makes it the run's unhandled error, as does a stack with no frame (a thrown
 * string); a frame of the tool's own dependencies is another package's too, which it cannot tell from the user's.
 */
export function toolsOwn(stack: string | undefined): boolean {
  const places = (stack ?? '').split('\n').flatMap((line) => {
    const place = FRAME.exec(line)?.slice(1).find((found) => found !== undefined);
    return place !== undefined && FILE.test(place) ? [place] : [];
  });
  const ours = (place: string) => OWN_PLACES.some((own) => place.startsWith(own));
  return places.some(ours) && places.every((place) => ours(place) || place.startsWith('node:'));
}

/** How many runs hear this process's faults now: outside them, a watch session shows them itself. */
let runsHearingProcess = 0;

/** Whether a run hears this process's faults now (see UnhandledErrors). */
export const runHearsProcess = (): boolean => runsHearingProcess > 0;

/** A fault of rollout-test's own outside any rollout ends the process, as before these were heard (see toolsOwn). */
export function endOnToolsOwn(error: UnhandledError): void {
  if (!toolsOwn(error.stack)) return;
  // As the CLI reports its other internal errors (main.ts): a URL's credentials in the stack are hidden.
  process.stderr.write(`rollout-test: internal error: ${redactUrlCredentials(error.stack ?? error.message)}\n`);
  exitProcess(1);
}

/**
 * A run's faults outside any rollout (see UnhandledError): those of the pool's threads, and, in the CLI's process
 * (`ownsProcess`), those of this thread, whose fault handlers are installed before the rollout files load and stay
 * until the run returns; a program that embeds the run keeps its process's faults. A rollout file's timer that threw
 * here crashed the process with no report (exit 1), and passed the run when it threw on a thread or with `--inline`.
 * Each fails the run now, which goes on and writes its reports; one that comes after the report was made is written
 * to stderr, and the run still exits 1. A fault raised alike by each thread that loaded a file is listed once.
 */
export class UnhandledErrors {
  readonly #heard: UnhandledError[] = [];
  readonly #seen = new Set<string>();
  /** How many were heard when the report took them; none until then. */
  #reported: number | undefined;
  readonly #stops: (() => void)[];

  constructor(pool: Pick<WorkerPool, 'onUnhandledError'>, ownsProcess: boolean) {
    const hear = (origin: UnhandledError['origin']) => (error: UnhandledError) => {
      if (origin === 'main') endOnToolsOwn(error);
      this.#hear({ ...error, origin });
    };
    this.#stops = [pool.onUnhandledError(hear('worker'))];
    if (ownsProcess) {
      runsHearingProcess++;
      this.#stops.push(installFaultHandlers(), onUnhandledError(hear('main')), () => void runsHearingProcess--);
    }
  }

  #hear(heard: UnhandledError): void {
    // As a rollout's errors are: the console, the journal and the reports never show a URL's credentials.
    const error = redactError(heard);
    const key = `${error.origin}\0${error.stack ?? error.message}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
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
