import path from 'node:path';
import type { RolloutSample } from '../../../model/sample.ts';
import type { ImplementationRef } from '../../../runtime/protocol.ts';
import { killedError, logFile, phaseError, runInEnvironment } from './runner-phase.ts';
import { TrialError } from './trial-error.ts';
import { writeTrialFile } from './trial-files.ts';
import type { TrialRun } from './trial-run.ts';
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
export async function runAgent(run: TrialRun): Promise<AgentOutcome> {
  try {
    return run.config.agent.kind === 'oracle' ? await runOracle(run) : await runWorkflow(run);
  } catch (error) {
    if (error instanceof TrialError) return { samples: [], logs: [], error };
    return { samples: [], logs: [], error: TrialError.of('AgentError', 'AGENT_ERROR', 'workflow', error) };
  }
}

function deadlineOf(run: TrialRun, what: string) {
  const seconds = run.config.agentTimeoutSec;
  return seconds === null ? null : { atEpochMs: Date.now() + seconds * 1000, message: `${what} deadline of ${seconds}s exceeded` };
}

async function runWorkflow(run: TrialRun): Promise<AgentOutcome> {
  const agent = run.config.agent as Extract<TrialRun['config']['agent'], { kind: 'workflow' }>;
  const { label: _hidden, ...request } = run.config.request; // the workflow never sees the label
  const outcome = await runInEnvironment(
    run,
    {
      kind: 'workflow',
      cwd: run.env.paths.workspace,
      implementation: inWorkspace(run, agent.implementation),
      input: {
        request,
        config: agent.config,
        artifactsDir: path.posix.join(run.env.paths.logs, 'artifacts'),
        deadline: deadlineOf(run, 'agent'),
      },
      outcomeFile: logFile(run, 'workflow', 'workflow-outcome.json').inside,
      samplesFile: logFile(run, 'workflow', 'samples.json').inside,
    },
    run.config.agentTimeoutSec,
  );
  if (outcome.ok) return { samples: outcome.samples, logs: outcome.logs };
  return { samples: [], logs: outcome.logs, error: phaseError('workflow', outcome) };
}

/** Harbor's oracle agent: runs the task's `solution/solve.sh` in the workspace, to validate the task. */
async function runOracle(run: TrialRun): Promise<AgentOutcome> {
  const { env, task, config } = run;
  if (!task.solutionDir) throw TrialError.of('AgentError', 'AGENT_ERROR', 'workflow', `task ${task.name} has no solution/solve.sh`);
  await env.upload(task.solutionDir, env.paths.solution);
  const seconds = config.agentTimeoutSec;
  const exec = await env.exec(['bash', path.posix.join(env.paths.solution, 'solve.sh')], {
    timeoutMs: seconds === null ? undefined : seconds * 1000,
    signal: run.signal,
  });
  await writeTrialFile(path.join(run.paths.agentDir, 'oracle.txt'), exec.stdout + exec.stderr);
  const samples: RolloutSample[] = [
    {
      source: 'oracle',
      messages: [...config.request.prompt, { role: 'assistant', content: exec.stdout }],
      metrics: {},
      extraFields: { exitCode: exec.exitCode ?? null },
    },
  ];
  const error =
    killedError('workflow', exec, seconds) ??
    (exec.exitCode === 0
      ? undefined
      : TrialError.of('AgentError', 'AGENT_ERROR', 'workflow', `solve.sh exited with code ${exec.exitCode}: ${exec.stderr.trim().slice(-500)}`));
  await writeTrialFile(path.join(run.paths.agentDir, 'samples.json'), JSON.stringify(samples, null, 2));
  return { samples, logs: [], error };
}
