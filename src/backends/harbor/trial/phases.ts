import { existsSync } from 'node:fs';
import path from 'node:path';
import type { HarborTask, TaskStep } from '../task/load-task.ts';
import type { StepConfig, TaskConfig, TaskEnvironment } from '../task/task-config.ts';
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

/** A verifier environment of its own (`environment_mode = "separate"`): its build context and `[environment]`. */
export interface SeparateVerifier {
  /** `tests/` (a step's own when it has one), holding the Dockerfile of the verifier image. */
  buildContext: string;
  environment: TaskEnvironment;
}

/** What verification runs with: the test folders merged into `/tests` (later ones win), and its settings. */
export interface VerifierPhase {
  testsDirs: string[];
  /** Set in separate mode: the verifier image holds `/tests` itself. */
  separate?: SeparateVerifier | undefined;
  env: Record<string, string>;
  timeoutSec: number;
  user?: string | number | undefined;
}

const withFile = (dir: string | undefined, file: string) => (dir && existsSync(path.join(dir, file)) ? dir : undefined);

type VerifierTable = TaskConfig['verifier'] | StepConfig['verifier'];

/** A table's own mode: explicit, else separate when it defines a verifier environment, else unset. */
const modeOf = (verifier: VerifierTable) => verifier.environment_mode ?? (verifier.environment ? 'separate' : undefined);

/**
 * Harbor's verifier mode and environment (`resolve_effective_verifier_env_config`): the step's mode, else the
 * task's, else shared; in separate mode the step's `[verifier.environment]`, else the task's, else a copy of
 * the task's `[environment]`, built from `tests/` (the step's when it has one).
 */
function separateVerifier(task: HarborTask, step?: { dir: string; settings: StepConfig }): SeparateVerifier | undefined {
  const mode = (step && modeOf(step.settings.verifier)) ?? taskVerifierMode(task.config);
  if (mode !== 'separate') return undefined;
  const environment = step?.settings.verifier.environment ?? task.config.verifier.environment ?? task.config.environment;
  const stepTests = step && withFile(path.join(step.dir, 'tests'), '.');
  return { buildContext: stepTests ?? task.testsDir ?? path.join(task.dir, 'tests'), environment };
}

/** Harbor's `resolve_task_verifier_mode`: the trial-level verifier mode of a single-step task. */
export function taskVerifierMode(config: TaskConfig): 'shared' | 'separate' {
  return modeOf(config.verifier) ?? 'shared';
}

/** Whether any verification of the task runs in a separate environment. */
export function usesSeparateVerifier(task: HarborTask): boolean {
  if (!task.steps.length) return separateVerifier(task) !== undefined;
  return task.steps.some((step, index) => separateVerifier(task, { dir: step.dir, settings: task.config.steps![index]! }) !== undefined);
}

/** The phases of a single-step trial: task.toml's `[agent]` and `[verifier]`, the request's deadlines first. */
export function singleStepPhases(config: TrialConfig, task: HarborTask): { agent: AgentPhase; verifier: VerifierPhase } {
  const { agent, verifier } = task.config;
  return {
    agent: { timeoutSec: config.agentTimeoutSec, user: agent.user, solutionDir: withFile(task.solutionDir, 'solve.sh') },
    verifier: {
      testsDirs: withFile(task.testsDir, 'test.sh') ? [task.testsDir!] : [],
      separate: separateVerifier(task),
      env: verifier.env,
      timeoutSec: config.verifierTimeoutSec,
      user: verifier.user,
    },
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
      separate: separateVerifier(task, { dir: step.dir, settings }),
      env: { ...task.config.verifier.env, ...settings.verifier.env },
      timeoutSec: request.graderTimeoutSec ?? settings.verifier.timeout_sec ?? task.config.verifier.timeout_sec,
      user: settings.verifier.user ?? task.config.verifier.user,
    },
  };
}
