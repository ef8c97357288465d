import type { Terminal } from '../reporters/terminal.ts';

/**
 * Ctrl-C once cancels the run (in-flight rollouts are cancelled, reports of what finished are written, exit
 * 130); twice exits at once, as Vitest does.
 */
export function interruptOnSigint(terminal: Terminal): { signal: AbortSignal } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
    terminal.write(`\n${terminal.colors.yellow('Cancelling: finishing reports of the rollouts that ended. Press Ctrl-C again to exit at once.')}\n`);
  };
  process.on('SIGINT', onSigint);
  return { signal: controller.signal };
}
