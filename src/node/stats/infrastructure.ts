import { proportionInterval } from './intervals.ts';
import { isInfrastructureFailure, type RolloutOutcome } from './outcomes.ts';

/**
 * How often a suite's rollouts failed for infrastructure (see {@link isInfrastructureFailure}: setup, or the
 * model endpoint's errors) rather than for the agent, with the 95% interval of that rate.
 */
export interface InfrastructureErrorRate {
  /** Rollouts that failed for infrastructure. */
  errors: number;
  /** Rollouts that ran (skipped ones never started, so they are left out). */
  rollouts: number;
  /** `errors / rollouts`; `null` when none ran. */
  rate: number | null;
  /** Wilson's 95% interval of the rate (continuity-corrected); `null` when none ran. */
  interval95: [number, number] | null;
  /** Errored rollouts that were the agent's (or its grader's) own failure: workflow or grader errors and timeouts. */
  agentErrors: number;
}

/** The infrastructure error rate of these outcomes, kept apart from the agent's own errors. */
export function infrastructureErrorRate(outcomes: readonly RolloutOutcome[]): InfrastructureErrorRate {
  let rollouts = 0;
  let errors = 0;
  let agentErrors = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 'skipped') continue;
    rollouts += 1;
    if (isInfrastructureFailure(outcome)) errors += 1;
    else if (outcome.status === 'errored') agentErrors += 1;
  }
  return { errors, rollouts, rate: rollouts ? errors / rollouts : null, interval95: proportionInterval(errors, rollouts), agentErrors };
}
