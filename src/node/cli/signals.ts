import { printable } from '../reporters/printable.ts';
import type { Terminal } from '../reporters/terminal.ts';
import { STOP_SIGNALS, type StopSignal } from '../types/stop-signals.ts';
import { exitProcess } from '../../runtime/faults.ts';

const NOTICE: Record<StopSignal, string> = {
  sigint: 'Cancelling: finishing reports of the rollouts that ended. Press Ctrl-C again to exit at once.',
  sigterm: 'SIGTERM: cancelling the running rollouts and writing the reports.',
  sighup: 'SIGHUP: cancelling the running rollouts and writing the reports.',
};

/**
 * Ctrl-C, SIGTERM (CI cancellations, `timeout`) and SIGHUP (a closed terminal) cancel the run: in-flight rollouts
 * are cancelled, the reports of what finished are written, and the run exits 130, 143 or 129. A second signal
 * exits at once, as Vitest does. The signal's abort reason is its name.
 */
export function interruptOnSignals(terminal: Terminal): { signal: AbortSignal } {
  const controller = new AbortController();
  for (const name of Object.keys(STOP_SIGNALS) as StopSignal[]) {
    process.on(name.toUpperCase() as NodeJS.Signals, () => {
      if (controller.signal.aborted) exitProcess(STOP_SIGNALS[name]);
      controller.abort(name);
      // stderr: the JSON reporter may be writing its report to stdout.
      process.stderr.write(printable(`\n${terminal.colors.yellow(NOTICE[name])}\n`));
    });
  }
  return { signal: controller.signal };
}
