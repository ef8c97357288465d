import path from 'node:path';
import type { RolloutSample } from '../../../model/sample.ts';
import type { ImplementationRef } from '../../../runtime/protocol.ts';
import { resolveEnvTemplates } from '../task/env-templates.ts';
import type { AgentPhase } from './phases.ts';
import { killedError, logFile, phaseError, runInEnvironment } from './runner-phase.ts';
import { uploadScripts } from './scripts.ts';
import { TrialError } from './trial-error.ts';
import { writeTrialFile } from './trial-files.ts';
import type { TrialRun } from './trial-run.ts';
import { writeTrialTrajectory } from './trajectory.ts';
import { workspacePathOf } from './workspace.ts';

/** What the agent step produced: samples (possibly none) and, when it failed or timed out, why. */
export interface AgentOutcome {
  samples: RolloutSample[];
  logs: string[];
  error?: TrialError | undefined;
}

/** A suite reference names a host file of the user's code; inside the trial it is the workspace copy. */
export function inWorkspace(run: TrialRun, ref: ImplementationRef): ImplementationRef {
  return typeof ref === 'string' ? ref : { ...ref, file: workspacePathOf(run.env, run.config.userCodeDir, ref.file) };
}

/** Runs the agent: the user's workflow inside the environment, or the oracle. Never throws a rollout's failure. */
export async function runAgent(run: TrialRun, phase: AgentPhase): Promise<AgentOutcome> {
  try {
    return run.config.agent.kind === 'oracle' ? await runOracle(run, phase) : await runWorkflow(run, phase);
  } catch (error) {
    if (error instanceof TrialError) return { samples: [], logs: [], error };
    return { samples: [], logs: [], error: TrialError.of('AgentError', 'AGENT_ERROR', 'workflow', error) };
  }
}

function deadlineOf(seconds: number | null, what: string) {
  return seconds === null ? null : { atEpochMs: Date.now() + seconds * 1000, message: `${what} deadline of ${seconds}s exceeded` };
}

async function runWorkflow(run: TrialRun, phase: AgentPhase): Promise<AgentOutcome> {
  const agent = run.config.agent as Extract<TrialRun['config']['agent'], { kind: 'workflow' }>;
  const { label: _hidden, ...request } = run.config.request; // the workflow never sees the label
  const prompt = phase.instruction === undefined ? request.prompt : [{ role: 'user' as const, content: phase.instruction }];
  const outcome = await runInEnvironment(
    run,
    {
      kind: 'workflow',
      cwd: run.env.paths.workspace,
      implementation: inWorkspace(run, agent.implementation),
      input: {
        request: { ...request, prompt },
        config: agent.config,
        artifactsDir: path.posix.join(run.env.paths.logs, 'artifacts'),
        deadline: deadlineOf(phase.timeoutSec, 'agent'),
      },
      outcomeFile: logFile(run, 'workflow', 'workflow-outcome.json').inside,
      samplesFile: logFile(run, 'workflow', 'samples.json').inside,
    },
    phase.timeoutSec,
    phase.user,
  );
  if (!outcome.ok) return { samples: [], logs: outcome.logs, error: phaseError('workflow', outcome) };
  await writeTrialTrajectory(run, outcome.samples);
  return { samples: outcome.samples, logs: outcome.logs };
}

/**
 * Harbor's oracle agent: runs the task's `solve.sh` (executed, so its shebang holds) in the working directory,
 * as `[agent] user`, with `[solution] env`. As in Harbor, a non-zero exit is recorded (`agent/exit-code.txt`)
 * and is no failure: the verifier decides. Only the deadline or a cancel stops the trial's agent step.
 */
async function runOracle(run: TrialRun, phase: AgentPhase): Promise<AgentOutcome> {
  const { env, task, config } = run;
  // Harbor's oracle raises FileNotFoundError, naming the script it looked for.
  if (!phase.solutionDir) throw TrialError.of('FileNotFoundError', 'AGENT_ERROR', 'workflow', `Solution script not found: ${path.join(task.dir, 'solution', 'solve.sh')}`);
  await uploadScripts(env, [phase.solutionDir], env.paths.solution, 'solve.sh');
  const exec = await env.exec([path.posix.join(env.paths.solution, 'solve.sh')], {
    env: { DEBIAN_FRONTEND: 'noninteractive', ...resolveEnvTemplates(task.config.solution.env) },
    timeoutMs: phase.timeoutSec === null ? undefined : phase.timeoutSec * 1000,
    signal: run.signal,
    user: phase.user,
  });
  await writeTrialFile(path.join(run.paths.agentDir, 'oracle.txt'), exec.stdout + exec.stderr);
  const killed = killedError('workflow', exec, phase.timeoutSec);
  if (!killed && exec.exitCode !== 0) await writeTrialFile(path.join(run.paths.agentDir, 'exit-code.txt'), String(exec.exitCode ?? ''));
  const samples: RolloutSample[] = [
    {
      source: 'oracle',
      messages: [...config.request.prompt, { role: 'assistant', content: exec.stdout }],
      metrics: {},
      extraFields: { exitCode: exec.exitCode ?? null },
    },
  ];
  await writeTrialFile(path.join(run.paths.agentDir, 'samples.json'), JSON.stringify(samples, null, 2));
  return { samples, logs: [], error: killed };
}
