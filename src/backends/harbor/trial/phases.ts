import { existsSync } from 'node:fs';
import path from 'node:path';
import type { HarborTask, TaskStep } from '../task/load-task.ts';
import type { StepConfig } from '../task/task-config.ts';
import type { TrialConfig } from './trial-config.ts';

/** What the agent step of a trial (or of one step of a multi-step trial) runs with. */
export interface AgentPhase {
  /** The workflow's prompt instead of the request's: a step's instruction. */
  instruction?: string | undefined;
  timeoutSec: number | null;
  user?: string | number | undefined;
  /** The folder holding the oracle's `solve.sh`; undefined when the task has none. */
  solutionDir: string | undefined;
}

/** What verification runs with: the test folders merged into `/tests` (later ones win), and its settings. */
export interface VerifierPhase {
  testsDirs: string[];
  env: Record<string, string>;
  timeoutSec: number;
  user?: string | number | undefined;
}

const withFile = (dir: string | undefined, file: string) => (dir && existsSync(path.join(dir, file)) ? dir : undefined);

/** The phases of a single-step trial: task.toml's `[agent]` and `[verifier]`, the request's deadlines first. */
export function singleStepPhases(config: TrialConfig, task: HarborTask): { agent: AgentPhase; verifier: VerifierPhase } {
  const { agent, verifier } = task.config;
  return {
    agent: { timeoutSec: config.agentTimeoutSec, user: agent.user, solutionDir: withFile(task.solutionDir, 'solve.sh') },
    verifier: { testsDirs: withFile(task.testsDir, 'test.sh') ? [task.testsDir!] : [], env: verifier.env, timeoutSec: config.verifierTimeoutSec, user: verifier.user },
  };
}

/**
 * The phases of one step, as Harbor resolves them: the step's own timeout, user and solution, else the
 * task's; its verifier env over the task's; `/tests` holds the task's tests/ with the step's tests/ over it,
 * so the step's test.sh runs when it has one, else the task's.
 */
export function stepPhases(config: TrialConfig, task: HarborTask, step: TaskStep, settings: StepConfig): { agent: AgentPhase; verifier: VerifierPhase } {
  const request = config.request;
  const stepTests = withFile(path.join(step.dir, 'tests'), '.');
  const testsDirs = [task.testsDir, stepTests].filter((dir): dir is string => dir !== undefined);
  const hasScript = [stepTests, task.testsDir].some((dir) => withFile(dir, 'test.sh'));
  return {
    agent: {
      instruction: step.instruction,
      timeoutSec: request.agentTimeoutSec ?? settings.agent.timeout_sec ?? task.config.agent.timeout_sec ?? null,
      user: settings.agent.user ?? task.config.agent.user,
      solutionDir: withFile(path.join(step.dir, 'solution'), 'solve.sh') ?? withFile(task.solutionDir, 'solve.sh'),
    },
    verifier: {
      testsDirs: hasScript ? testsDirs : [],
      env: { ...task.config.verifier.env, ...settings.verifier.env },
      timeoutSec: request.graderTimeoutSec ?? settings.verifier.timeout_sec ?? task.config.verifier.timeout_sec,
      user: settings.verifier.user ?? task.config.verifier.user,
    },
  };
}
