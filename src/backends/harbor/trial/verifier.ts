import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { RolloutSample } from '../../../model/sample.ts';
import { type AgentOutcome, inWorkspace } from './agent.ts';
import { readRewardFiles } from './reward-file.ts';
import { type OutputTail, outputTails } from './output-tail.ts';
import type { TrialEnvironment } from '../environments/environment.ts';
import { resolveEnvTemplates } from '../task/env-templates.ts';
import type { ArtifactEntry } from '../task/task-config.ts';
import type { VerifierPhase } from './phases.ts';
import { killedError, logFile, phaseError, runInEnvironment } from './runner-phase.ts';
import { uploadScripts } from './scripts.ts';
import { runSeparateVerifier } from './separate-verifier.ts';
import { TrialError } from './trial-error.ts';
import { removeTrialEntry, writeTrialFile } from './trial-files.ts';
import type { TrialRun } from './trial-run.ts';

/** What verification produced: rewards, the graded samples when a grader ran, or why it failed. */
export interface VerifierOutcome {
  rewards: Record<string, number>;
  samples?: RolloutSample[];
  logs: string[];
  error?: TrialError | undefined;
  /** The end of what `tests/test.sh` printed, for the failure's report (the whole is in `verifier/`). */
  output?: OutputTail[] | undefined;
}

/**
 * Verifies the agent's work: the task's `tests/test.sh` when it has one (rewards from the files it writes),
 * else the configured Grader, run inside the environment. Never throws a rollout's failure.
 */
export async function runVerifier(run: TrialRun, agent: AgentOutcome, phase: VerifierPhase, artifacts: ArtifactEntry[] = []): Promise<VerifierOutcome> {
  await emptyDir(run.paths.verifierDir);
  try {
    if (phase.separate) return await runSeparateVerifier(run, phase.separate, artifacts, (env) => runTests(run, phase, env));
    if (phase.testsDirs.length) {
      await uploadScripts(run.env, phase.testsDirs, run.env.paths.tests, 'test.sh');
      return await runTests(run, phase, run.env);
    }
    if (run.config.grader) return await runGrader(run, agent, phase);
    throw TrialError.of('VerifierError', 'VALIDATION_ERROR', 'grader', `no reward source: task ${run.task.name} has no tests/test.sh and no grader is configured`);
  } catch (error) {
    return failedVerification(error);
  }
}

function failedVerification(error: unknown): VerifierOutcome {
  const failure = error instanceof TrialError ? error : TrialError.of('VerifierError', 'AGENT_ERROR', 'grader', error);
  return { rewards: {}, logs: [], error: failure };
}

/** Whatever the agent left in the verifier folder must not pass for the verifier's output. The folder itself stays (it may be mounted). */
async function emptyDir(dir: string): Promise<void> {
  for (const entry of await readdir(dir)) await removeTrialEntry(path.join(dir, entry));
}

/**
 * Harbor's verifier: `/tests/test.sh` executed (its shebang holds) with `[verifier] env` (templates resolved),
 * as `[verifier] user`, in `env`. The script's exit code is not the reward; the reward files are.
 */
async function runTests(run: TrialRun, phase: VerifierPhase, env: TrialEnvironment): Promise<VerifierOutcome> {
  const exec = await env.exec([path.posix.join(env.paths.tests, 'test.sh')], {
    env: resolveEnvTemplates(phase.env),
    timeoutMs: phase.timeoutSec * 1000,
    signal: run.signal,
    user: phase.user,
  });
  await writeTrialFile(path.join(run.paths.verifierDir, 'test-stdout.txt'), exec.stdout);
  if (exec.stderr) await writeTrialFile(path.join(run.paths.verifierDir, 'test-stderr.txt'), exec.stderr);
  // Taken from what the harness captured, not read back from the files, which the script could have replaced.
  const output = outputTails(exec.stdout, exec.stderr);
  try {
    const killed = killedError('grader', exec, phase.timeoutSec);
    if (killed) throw killed;
    return { rewards: await readRewardFiles(run.paths.verifierDir), logs: [], output };
  } catch (error) {
    return { ...failedVerification(error), output };
  }
}

async function runGrader(run: TrialRun, agent: AgentOutcome, phase: VerifierPhase): Promise<VerifierOutcome> {
  const grader = run.config.grader!;
  const seconds = phase.timeoutSec;
  const outcome = await runInEnvironment(
    run,
    {
      kind: 'grader',
      cwd: run.env.paths.workspace,
      implementation: inWorkspace(run, grader.implementation),
      input: {
        request: run.config.request,
        config: grader.config,
        samples: agent.samples,
        artifactsDir: path.posix.join(run.env.paths.logs, 'artifacts'),
        deadline: { atEpochMs: Date.now() + seconds * 1000, message: `grader deadline of ${seconds}s exceeded` },
      },
      outcomeFile: logFile(run, 'grader', 'grader-outcome.json').inside,
      rewardFile: logFile(run, 'grader', 'reward.json').inside,
    },
    seconds,
    phase.user,
  );
  if (outcome.ok) return { rewards: outcome.rewards, samples: outcome.samples, logs: outcome.logs };
  return { rewards: {}, logs: outcome.logs, error: phaseError('grader', outcome) };
}
