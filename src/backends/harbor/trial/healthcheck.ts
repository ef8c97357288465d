import { setTimeout as sleep } from 'node:timers/promises';
import type { TrialEnvironment } from '../environments/environment.ts';
import type { HealthcheckConfig } from '../task/task-config.ts';
import { TrialError } from './trial-error.ts';

/**
 * Runs `[environment.healthcheck]` (or a step's) as Harbor does, with Docker HEALTHCHECK semantics: the
 * command is polled every `start_interval_sec` during `start_period_sec` without counting failures, then every
 * `interval_sec` until it exits 0; `retries` consecutive failures fail the trial before its agent starts.
 */
export async function runHealthcheck(env: TrialEnvironment, check: HealthcheckConfig, signal: AbortSignal | undefined, log: (line: string) => Promise<void>): Promise<void> {
  const startPeriodEnd = performance.now() + check.start_period_sec * 1000;
  let failures = 0;
  for (;;) {
    const inStartPeriod = performance.now() < startPeriodEnd;
    const exec = await env.exec(['sh', '-c', check.command], { timeoutMs: check.timeout_sec * 1000, signal });
    if (exec.cancelled) throw TrialError.of('CancelledError', 'AGENT_ERROR', 'setup', 'cancelled during the healthcheck');
    if (exec.exitCode === 0) return log('healthcheck passed');
    const why = exec.timedOut ? `timed out after ${check.timeout_sec}s` : `exited with code ${exec.exitCode}`;
    await log(`healthcheck ${why}${inStartPeriod ? ' (start period)' : ''}: ${check.command}`);
    if (!inStartPeriod && ++failures >= check.retries) {
      throw TrialError.of('HealthcheckError', 'AGENT_ERROR', 'setup', `healthcheck failed after ${check.retries} consecutive retries: ${check.command}`);
    }
    await sleep((inStartPeriod ? check.start_interval_sec : check.interval_sec) * 1000, undefined, { signal }).catch(() => undefined);
  }
}
