import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { TaskStep } from '../task/load-task.ts';
import type { StepConfig } from '../task/task-config.ts';
import { type AgentOutcome, runAgent } from './agent.ts';
import { collectArtifacts } from './artifacts.ts';
import { runHealthcheck } from './healthcheck.ts';
import { stepPhases } from './phases.ts';
import type { StepOutcomes, TrialContext } from './trial-outcome.ts';
import { TrialError } from './trial-error.ts';
import { agentContextOf, emptyStepResult, exceptionInfoOf, type StepResult } from './trial-record.ts';
import type { TrialPaths } from './trial-paths.ts';
import type { TrialRun } from './trial-run.ts';
import { withLimitError } from './limit-error.ts';
import { runVerifier } from './verifier.ts';

/**
 * A multi-step trial (`[[steps]]`), as Harbor runs one in a single environment: for each step its `workdir/`
 * is uploaded to the working directory and its `setup.sh` run, its healthcheck passes, the agent gets the
 * step's instruction, artifacts are collected and the step is verified; then its agent, verifier and
 * artifacts folders move to `steps/<name>/`. A step that failed without a reward, or whose rewards are below
 * its `min_reward`, ends the trial. The trial's rewards are the per-key mean over the steps that produced
 * any (missing keys count 0), or the last step's with `multi_step_reward_strategy = "final"`.
 */
export async function runMultiStep(run: TrialRun, context: TrialContext, outcome: StepOutcomes): Promise<void> {
  const { task, recorder } = run;
  const results: StepResult[] = (recorder.result.step_results = []);
  const samples: AgentOutcome['samples'] = [];
  for (const [index, step] of task.steps.entries()) {
    const settings = task.config.steps![index]!;
    const result = emptyStepResult(step.name);
    results.push(result);
    await recorder.log(`step ${index + 1}/${task.steps.length} "${step.name}" started`);
    await runStep(run, context, step, settings, result, samples);
    await archiveStep(run, step.name);
    if (context.signal?.aborted || stopsAfter(settings, result)) break;
  }
  outcome.agent = { samples, logs: [] };
  const rewards = task.config.multi_step_reward_strategy === 'final' ? results.at(-1)?.verifier_result?.rewards : meanRewards(results);
  if (rewards && Object.keys(rewards).length) {
    outcome.verifier = { rewards, logs: [] };
    recorder.result.verifier_result = { rewards };
    return;
  }
  const why = results.map((r) => r.exception_info && `step "${r.step_name}": ${r.exception_info.exception_type}: ${r.exception_info.exception_message}`).find(Boolean);
  const error = TrialError.of('VerifierError', 'VALIDATION_ERROR', 'grader', `no step produced a reward${why ? ` (${why.split('\n')[0]})` : ''}`);
  outcome.verifier = { rewards: {}, logs: [], error };
  await recorder.fail(error);
}

async function runStep(run: TrialRun, context: TrialContext, step: TaskStep, settings: StepConfig, result: StepResult, samples: AgentOutcome['samples']): Promise<void> {
  const { recorder, task } = run;
  const phases = stepPhases(run.config, task, step, settings);
  const failed = (error: unknown) => {
    const trialError = error instanceof TrialError ? error : TrialError.of('AgentSetupError', 'AGENT_ERROR', 'setup', error);
    result.exception_info = exceptionInfoOf(trialError);
    return recorder.log(`step "${step.name}": ${trialError.type}: ${trialError.message}`);
  };
  try {
    await prepareStep(run, step, phases.agent.user, settings);
  } catch (error) {
    return failed(error);
  }
  await context.emit('agent-started');
  const agent = await recorder.step('agent_execution', async () => withLimitError(run, 'workflow', await runAgent(run, phases.agent)), result);
  samples.push(...agent.samples);
  result.agent_result = agentContextOf(agent);
  await context.emit('agent-ended');
  if (agent.error) await failed(agent.error);
  const artifacts = [...task.config.artifacts, ...settings.artifacts];
  await collectArtifacts(run, artifacts, [...task.config.verifier.collect, ...settings.verifier.collect]);
  if (agent.error?.type === 'CancelledError') return;
  await context.emit('verification-started');
  const verifier = await recorder.step('verifier', async () => withLimitError(run, 'grader', await runVerifier(run, agent, phases.verifier, artifacts)), result);
  if (verifier.error) {
    if (!result.exception_info) await failed(verifier.error);
  } else result.verifier_result = { rewards: verifier.rewards };
}

/** The step's `workdir/` into the working directory, its `setup.sh` run there, then its healthcheck. */
async function prepareStep(run: TrialRun, step: TaskStep, user: string | number | undefined, settings: StepConfig): Promise<void> {
  const { env } = run;
  const workdir = path.join(step.dir, 'workdir');
  if (existsSync(workdir)) await env.upload(workdir, env.paths.workspace);
  if (existsSync(path.join(workdir, 'setup.sh'))) {
    const exec = await env.exec(['bash', path.posix.join(env.paths.workspace, 'setup.sh')], { signal: run.signal, user });
    if (exec.exitCode !== 0) throw new Error(`step "${step.name}" setup.sh exited with code ${exec.exitCode}: ${exec.stderr.trim().slice(-500)}`);
  }
  if (settings.healthcheck) await runHealthcheck(env, settings.healthcheck, run.signal, (line) => run.recorder.log(line));
}

/** Harbor's early stop: a step that failed without a reward, or one below its `min_reward`. */
function stopsAfter(settings: StepConfig, result: StepResult): boolean {
  if (result.exception_info && !result.verifier_result) return true;
  if (settings.min_reward === undefined) return false;
  const thresholds = typeof settings.min_reward === 'number' ? { reward: settings.min_reward } : settings.min_reward;
  const rewards = result.verifier_result?.rewards ?? {};
  return Object.entries(thresholds).some(([key, threshold]) => (rewards[key] ?? -Infinity) < threshold);
}

/** Per-key means over the steps with a reward; a key a step lacks counts 0 there. */
function meanRewards(results: StepResult[]): Record<string, number> | undefined {
  const rewarded = results.flatMap((result) => (result.verifier_result ? [result.verifier_result.rewards] : []));
  if (!rewarded.length) return undefined;
  const keys = new Set(rewarded.flatMap((rewards) => Object.keys(rewards)));
  return Object.fromEntries([...keys].map((key) => [key, rewarded.reduce((sum, rewards) => sum + (rewards[key] ?? 0), 0) / rewarded.length]));
}

/**
 * Moves what a step left in the trial's agent, verifier and artifacts folders to `steps/<name>/`. The folders
 * themselves stay (they are mounted into the environment); so does the chain down to `artifacts/logs/artifacts`.
 */
async function archiveStep(run: TrialRun, name: string): Promise<void> {
  const { paths } = run;
  const target = paths.stepDir(name);
  await moveContents(paths.agentDir, path.join(target, 'agent'), []);
  await moveContents(paths.verifierDir, path.join(target, 'verifier'), []);
  await moveContents(paths.artifactsDir, path.join(target, 'artifacts'), [path.join(paths.artifactsDir, 'logs'), paths.logDirs.artifacts]);
}

async function moveContents(from: string, to: string, keep: string[]): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const destination = path.join(to, entry.name);
    if (keep.includes(source) && entry.isDirectory() && !entry.isSymbolicLink()) {
      await moveContents(source, destination, keep);
      continue;
    }
    await rm(destination, { recursive: true, force: true });
    await rename(source, destination);
  }
}

/**
 * As Harbor at the end of a multi-step trial (once the environment has stopped): the top-level agent, verifier
 * and artifacts folders, which every step emptied into `steps/<name>/`, are removed when they hold nothing but
 * empty folders. Only empty folders are removed; a link counts as content and is never followed.
 */
export async function removeEmptyMountDirs(paths: TrialPaths): Promise<void> {
  for (const dir of [paths.agentDir, paths.verifierDir, paths.artifactsDir]) await removeIfEmptyTree(dir);
}

/** Removes `dir` if it holds only empty folders (at any depth); says whether it did. */
async function removeIfEmptyTree(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return false;
  let empty = true;
  for (const entry of entries) {
    if (!entry.isDirectory() || !(await removeIfEmptyTree(path.join(dir, entry.name)))) empty = false;
  }
  // Something written since the listing makes rmdir fail: the folder then stays, as it is not empty.
  return empty && rmdir(dir).then(() => true, () => false);
}
