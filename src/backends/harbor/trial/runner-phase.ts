import path from 'node:path';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from '../../../runtime/phases.ts';
import type { TrialRunnerSpec } from '../../../runtime/trial-protocol.ts';
import type { ExecResult } from '../environments/environment.ts';
import { TrialError } from './trial-error.ts';
import { readTrialFile, UnsafeTrialFileError, writeTrialFile } from './trial-files.ts';
import type { TrialRun } from './trial-run.ts';

/** After the runner's own deadline fires, it gets this long to write its outcome before it is killed. */
const GRACE_MS = 3000;

/** Which trial log folder a phase uses, and how its failures are named. */
const PHASES = {
  workflow: { dir: 'agent', error: 'AgentError', timeout: 'AgentTimeoutError', phase: 'workflow' },
  grader: { dir: 'verifier', error: 'VerifierError', timeout: 'VerifierTimeoutError', phase: 'grader' },
} as const;

/** A phase's file inside the environment and on the host (the log folders are the trial directory's own). */
export function logFile(run: TrialRun, kind: TrialRunnerSpec['kind'], name: string): { inside: string; host: string } {
  const dir = PHASES[kind].dir;
  return { inside: path.posix.join(run.env.paths.logs, dir, name), host: path.join(run.paths.dir, dir, name) };
}

type OutcomeOf<K> = K extends 'workflow' ? WorkflowPhaseOutcome : GraderPhaseOutcome;

/**
 * Runs one phase through the trial runner inside the environment and reads its outcome back. A runner that
 * wrote none (killed at its deadline, cancelled, crashed) becomes the matching failure.
 */
export async function runInEnvironment<S extends TrialRunnerSpec>(
  run: TrialRun,
  spec: S,
  timeoutSec: number | null,
  user?: string | number,
): Promise<OutcomeOf<S['kind']>> {
  const specFile = logFile(run, spec.kind, `${spec.kind}-spec.json`);
  await writeTrialFile(specFile.host, JSON.stringify(spec, null, 2));
  const exec = await run.env.exec([...run.launch.command, specFile.inside], {
    env: run.runnerEnv,
    timeoutMs: timeoutSec === null ? undefined : timeoutSec * 1000 + GRACE_MS,
    signal: run.signal,
    user,
  });
  await writeTrialFile(logFile(run, spec.kind, `${spec.kind}-output.txt`).host, exec.stdout + exec.stderr);
  const outcome = await readOutcome(spec.kind, logFile(run, spec.kind, path.posix.basename(spec.outcomeFile)).host);
  if (outcome) return outcome as OutcomeOf<S['kind']>;
  throw missingOutcome(spec.kind, exec, timeoutSec);
}

/** The runner's outcome; none when it wrote no JSON. A link or FIFO in its place fails the phase. */
async function readOutcome(kind: TrialRunnerSpec['kind'], file: string): Promise<unknown> {
  let text: string | undefined;
  try {
    text = await readTrialFile(file);
  } catch (error) {
    if (!(error instanceof UnsafeTrialFileError)) throw error;
    const names = PHASES[kind];
    throw TrialError.of('UnsafeTrialFileError', kind === 'grader' ? 'VALIDATION_ERROR' : 'AGENT_ERROR', names.phase, error.message);
  }
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The failure of a command that was killed at its deadline or by a cancel; undefined when it ended by itself. */
export function killedError(kind: TrialRunnerSpec['kind'], exec: ExecResult, timeoutSec: number | null): TrialError | undefined {
  const names = PHASES[kind];
  if (exec.cancelled) return TrialError.of('CancelledError', 'AGENT_ERROR', names.phase, 'cancelled before it finished');
  if (exec.timedOut) return TrialError.of(names.timeout, 'TIMEOUT', names.phase, `${kind} deadline of ${timeoutSec}s exceeded`);
  return undefined;
}

function missingOutcome(kind: TrialRunnerSpec['kind'], exec: ExecResult, timeoutSec: number | null): TrialError {
  const killed = killedError(kind, exec, timeoutSec);
  if (killed) return killed;
  const names = PHASES[kind];
  const tail = (exec.stderr || exec.stdout).trim().split('\n').slice(-20).join('\n');
  return TrialError.of(names.error, 'AGENT_ERROR', names.phase, `the trial runner exited with code ${exec.exitCode} without an outcome:\n${tail}`);
}

/** Turns a failed phase outcome into the trial's exception. */
export function phaseError(kind: TrialRunnerSpec['kind'], outcome: Extract<WorkflowPhaseOutcome | GraderPhaseOutcome, { ok: false }>): TrialError {
  const names = PHASES[kind];
  if (outcome.cancelled) return new TrialError('CancelledError', outcome.error);
  return new TrialError(outcome.error.category === 'TIMEOUT' ? names.timeout : names.error, outcome.error);
}
