import { TrialError } from './trial-error.ts';
import type { TrialRun } from './trial-run.ts';

/**
 * A phase that made the trial reach a limit of task.toml fails with that limit named, whatever it returned:
 * a fork bomb's failed forks or an OOM-killed child need not fail the command that started them. Every step of
 * a multi-step trial is checked as a single-step trial is.
 */
export async function withLimitError<T extends { error?: TrialError | undefined }>(run: TrialRun, phase: 'workflow' | 'grader', outcome: T): Promise<T> {
  const reached = (await run.env.limitsReached?.()) ?? [];
  if (!reached.length || outcome.error?.type === 'ResourceLimitError') return outcome;
  const message = `the trial reached ${reached.join(' and ')}${outcome.error ? ` (then: ${outcome.error.message})` : ''}`;
  return { ...outcome, error: TrialError.of('ResourceLimitError', 'AGENT_ERROR', phase, message) };
}
