import type { ErrorCategory, Phase, RolloutError } from '../../../model/result.ts';

/**
 * Harbor's exception kinds. Setup kinds are retryable; timeouts, reward-file errors and agent failures are
 * outcomes of the rollout itself and are never retried.
 */
export type TrialErrorType =
  | 'EnvironmentStartError'
  | 'AgentSetupError'
  | 'AgentError'
  /** The oracle found no `solution/solve.sh`, as Harbor's oracle reports it. */
  | 'FileNotFoundError'
  | 'AgentTimeoutError'
  | 'VerifierError'
  | 'VerifierTimeoutError'
  | 'RewardFileNotFoundError'
  | 'RewardFileEmptyError'
  | 'VerifierOutputParseError'
  /** A file the trial shares with the harness is a link, a FIFO or too large, so the harness refused it. */
  | 'UnsafeTrialFileError'
  /** The trial reached a limit of task.toml (memory, pids, storage). */
  | 'ResourceLimitError'
  | 'CancelledError'
  /** `[environment.healthcheck]` (or a step's) kept failing. */
  | 'HealthcheckError'
  /** task.toml asks for something the host cannot give, e.g. an env template naming an unset variable. */
  | 'ValueError'
  /** The harness itself failed, e.g. writing the trial directory. */
  | 'HarnessError';

const RETRYABLE = new Set<TrialErrorType>(['EnvironmentStartError', 'AgentSetupError']);

/** A failure of one trial step, with Harbor's type name and the rollout's category and phase. */
export class TrialError extends Error {
  constructor(
    readonly type: TrialErrorType,
    readonly rolloutError: RolloutError,
  ) {
    super(rolloutError.message);
    this.name = type;
    if (rolloutError.stack) this.stack = rolloutError.stack;
  }

  /** Builds one from a message, or from something thrown (whose stack is kept). */
  static of(type: TrialErrorType, category: ErrorCategory, phase: Phase, cause: unknown): TrialError {
    const message = cause instanceof Error ? cause.message : String(cause);
    const error: RolloutError = { category, phase, message };
    if (cause instanceof Error && cause.stack) error.stack = cause.stack;
    return new TrialError(type, error);
  }

  /** Whether a new attempt could succeed: only setup failures (a flaky environment) qualify. */
  get retryable(): boolean {
    return RETRYABLE.has(this.type);
  }
}
