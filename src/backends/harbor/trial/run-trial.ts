import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AppliedLimits } from '../../../model/limits.ts';
import type { DockerPool } from '../environments/docker/docker-pool.ts';
import type { TrialEnvironment } from '../environments/environment.ts';
import type { HarborTask } from '../task/load-task.ts';
import { runAgent } from './agent.ts';
import { collectArtifacts } from './artifacts.ts';
import { checkEnvTemplates, createTaskEnvironment } from './environment-init.ts';
import { harborTrialConfig, harborTrialLock, trialIdentity } from './harbor-files.ts';
import { runHealthcheck } from './healthcheck.ts';
import { removeEmptyMountDirs, runMultiStep } from './multi-step.ts';
import { singleStepPhases, usesSeparateVerifier } from './phases.ts';
import { type RunnerLaunch, trialRunnerLaunch } from './runtime-entry.ts';
import type { TrialConfig } from './trial-config.ts';
import type { StepOutcomes, TrialContext, TrialOutcome, TrialTimings } from './trial-outcome.ts';
import { TrialError, type TrialErrorType } from './trial-error.ts';
import { TrialPaths, trialDirOf } from './trial-paths.ts';
import { agentContextOf, TrialRecorder } from './trial-record.ts';
import type { TrialRun } from './trial-run.ts';
import { withLimitError } from './limit-error.ts';
import { runVerifier } from './verifier.ts';
import { installUserCode, userNodeModules } from './workspace.ts';

/**
 * Runs one Harbor trial: environment start → healthcheck → user code into the workspace → agent → artifacts
 * → verification → stop (for a multi-step task, agent to verification once per step), writing Harbor's trial
 * directory as it goes. The environment is stopped on every path. An agent timeout is recorded and the trial
 * still verifies, as in Harbor; other agent failures skip verification.
 */
export async function runTrial(config: TrialConfig, context: TrialContext): Promise<TrialOutcome> {
  const { paths, recorder } = await openTrialDir(config, context.task);
  await context.emit('trial-started');
  const outcome: Pick<TrialOutcome, 'agent' | 'verifier'> = {};
  const launch = trialRunnerLaunch();
  let env: TrialEnvironment | undefined;
  let limits: AppliedLimits | undefined;
  try {
    const { task } = context;
    await step(recorder, 'environment_setup', 'EnvironmentStartError', context.signal, async () => {
      env = createTrialEnvironment(config, task, paths, launch, context.dockerPool);
      await withDeadline(env.start(context.signal), task.config.environment.build_timeout_sec, 'environment start');
      for (const note of env.notes ?? []) await recorder.log(note);
      limits = { ...env.appliedLimits?.(), ...(task.steps.length ? {} : deadlines(config)) };
      if (!env.honoursUsers && (task.config.agent.user !== undefined || task.config.verifier.user !== undefined)) {
        await recorder.log(`warning: [agent]/[verifier] user is not honoured here: the ${env.type} environment runs every command as the harness's user`);
      }
    });
    await context.emit('environment-started');
    const healthcheck = task.config.environment.healthcheck;
    if (healthcheck) await runHealthcheck(env!, healthcheck, context.signal, (line) => recorder.log(line));
    const run: TrialRun = { config, task, env: env!, paths, recorder, signal: context.signal, launch, runnerEnv: {} };
    await step(recorder, 'agent_setup', 'AgentSetupError', context.signal, () => setUpAgent(run, context.apiKey));
    await (task.steps.length ? runMultiStep(run, context, outcome) : runSingleStep(run, context, outcome));
  } catch (error) {
    await recorder.fail(error instanceof TrialError ? error : TrialError.of('HarnessError', 'AGENT_ERROR', 'setup', error));
  } finally {
    await stopQuietly(env, recorder);
  }
  // Once its steps ran (as Harbor, not when the environment never started), a multi-step trial's emptied folders go.
  if (recorder.result.step_results) await removeEmptyMountDirs(paths);
  await recorder.finish();
  const cancelled = context.signal?.aborted === true;
  await context.emit(cancelled ? 'trial-cancelled' : 'trial-ended', recorder.result);
  return {
    trialDir: paths.dir,
    record: recorder.result,
    error: recorder.firstError,
    cancelled,
    ...outcome,
    timings: timingsOf(recorder, context),
    limits,
  };
}

/**
 * A single-step trial's deadlines: the harness ends the agent's and the verifier's commands (their process groups)
 * at them. A multi-step task's deadlines are each step's own, and are not reported.
 */
function deadlines(config: TrialConfig): AppliedLimits {
  const agent = config.agentTimeoutSec;
  return {
    ...(agent !== null && { agentTimeoutSec: { value: agent, enforcedBy: 'harness' as const } }),
    graderTimeoutSec: { value: config.verifierTimeoutSec, enforcedBy: 'harness' },
  };
}

/**
 * Creates the trial directory with Harbor's config.json and lock.json, and the recorder of its result. The
 * log folders are writable by any user, as in Harbor: the task's `[agent]`/`[verifier] user` writes there.
 */
async function openTrialDir(config: TrialConfig, task: HarborTask): Promise<{ paths: TrialPaths; recorder: TrialRecorder }> {
  const paths = new TrialPaths(trialDirOf(config));
  for (const dir of Object.values(paths.logDirs)) await mkdir(dir, { recursive: true });
  for (const dir of [...Object.values(paths.logDirs), path.dirname(paths.logDirs.artifacts), paths.artifactsDir]) await chmod(dir, 0o777);
  await writeFile(paths.configFile, `${JSON.stringify(harborTrialConfig(config), null, 2)}\n`);
  await writeFile(paths.lockFile, `${JSON.stringify(harborTrialLock(config, task), null, 2)}\n`);
  const recorder = new TrialRecorder(paths, trialIdentity(config, task, paths.dir));
  for (const warning of task.warnings) await recorder.log(`warning: ${warning}`);
  return { paths, recorder };
}

function timingsOf(recorder: TrialRecorder, context: TrialContext): TrialTimings {
  return {
    queuedMs: context.queuedMs ?? 0,
    environmentSetupMs: recorder.durationMs('environment_setup'),
    agentSetupMs: recorder.durationMs('agent_setup'),
    agentMs: recorder.durationMs('agent_execution'),
    verifierMs: recorder.durationMs('verifier'),
  };
}

/**
 * The environment of a trial, sharing the harness runtime and the user's node_modules with it. A task that
 * verifies in a separate environment needs docker: it fails here, before its agent runs.
 */
function createTrialEnvironment(config: TrialConfig, task: HarborTask, paths: TrialPaths, launch: RunnerLaunch, pool: DockerPool | undefined): TrialEnvironment {
  if (config.environment.type === 'process' && usesSeparateVerifier(task)) {
    throw TrialError.of('ValueError', 'VALIDATION_ERROR', 'setup', `environment_mode = "separate" needs the docker or sandbox environment, not ${config.environment.type}`);
  }
  checkEnvTemplates(task, config.agent.kind === 'oracle');
  const modules = userNodeModules(config.userCodeDir);
  return createTaskEnvironment(config.environment, task.config.environment, {
    trialDir: paths.dir,
    logDirs: paths.logDirs,
    sharedPaths: [...launch.sharedPaths, ...(modules ? [modules] : [])],
    taskName: task.name,
    buildContext: task.environmentDir,
    composeFile: task.composeFile,
    rootWorkdirFallback: needsUserCode(config) ? '/workspace' : undefined,
    userCode: needsUserCode(config) ? { dir: config.userCodeDir, excluded: excludedFrom(config, task) } : undefined,
  }, pool);
}

/** The user's code runs in the trial when a workflow or a grader does; Harbor's oracle alone needs none. */
function needsUserCode(config: TrialConfig): boolean {
  return config.agent.kind === 'workflow' || config.grader !== undefined;
}

/**
 * Copies the user code in (unless only the oracle runs, which leaves the image's working directory as Harbor
 * does) and routes the model endpoint; the key goes to the runner's environment only.
 */
async function setUpAgent(run: TrialRun, apiKey: string | undefined): Promise<void> {
  if (!needsUserCode(run.config)) return;
  await installUserCode(run.env, { dir: run.config.userCodeDir, excluded: excludedFrom(run.config, run.task) });
  const user = run.task.config.agent.user;
  // The copy is root's; the workspace must stay the agent's own, as the image made it.
  if (user !== undefined && run.env.honoursUsers) await run.env.exec(['chown', '-R', String(user), run.env.paths.workspace], { user: 0 });
  const url = run.config.chatCompletionsUrl;
  if (url) {
    const route = await run.env.routeEndpoint(url);
    run.runnerEnv.ROLLOUT_CHAT_COMPLETIONS_URL = route.url;
    if (route.socket) run.runnerEnv.ROLLOUT_MODEL_SOCKET = route.socket;
  }
  if (apiKey) run.runnerEnv.ROLLOUT_API_KEY = apiKey;
}

function excludedFrom(config: TrialConfig, task: HarborTask): string[] {
  const steps = task.steps.length ? path.join(task.dir, 'steps') : undefined;
  return [path.resolve(config.trialsDir), task.testsDir, task.solutionDir, steps].filter((dir): dir is string => dir !== undefined);
}

/**
 * A single-step trial: the agent, its artifacts collected, then verification unless the agent failed for
 * another reason than its deadline (a solve.sh that exits non-zero is no failure: see the oracle).
 */
async function runSingleStep(run: TrialRun, context: TrialContext, outcome: StepOutcomes): Promise<void> {
  const { recorder, task } = run;
  const phases = singleStepPhases(run.config, task);
  await context.emit('agent-started');
  const agent = await recorder.step('agent_execution', async () => withLimitError(run, 'workflow', await runAgent(run, phases.agent)));
  outcome.agent = agent;
  recorder.result.agent_result = agentContextOf(agent);
  await context.emit('agent-ended');
  await collectArtifacts(run, task.config.artifacts, task.config.verifier.collect);
  if (agent.error) await recorder.fail(agent.error);
  if (agent.error && agent.error.type !== 'AgentTimeoutError') return;
  throwIfCancelled(context.signal, 'workflow');
  await context.onVerificationStart?.(agent, timingsOf(recorder, context));
  await context.emit('verification-started');
  const verifier = await recorder.step('verifier', async () => withLimitError(run, 'grader', await runVerifier(run, agent, phases.verifier, task.config.artifacts)));
  outcome.verifier = verifier;
  if (verifier.error) await recorder.fail(verifier.error);
  else recorder.result.verifier_result = { rewards: verifier.rewards };
}

/** A setup step: its failures become the given (retryable) exception type; a cancel stops it first. */
async function step<T>(
  recorder: TrialRecorder,
  name: 'environment_setup' | 'agent_setup',
  type: TrialErrorType,
  signal: AbortSignal | undefined,
  body: () => Promise<T>,
): Promise<T> {
  throwIfCancelled(signal, 'setup');
  try {
    return await recorder.step(name, body);
  } catch (error) {
    throwIfCancelled(signal, 'setup');
    throw error instanceof TrialError ? error : TrialError.of(type, 'AGENT_ERROR', 'setup', error);
  }
}

function throwIfCancelled(signal: AbortSignal | undefined, phase: 'setup' | 'workflow'): void {
  if (signal?.aborted) throw TrialError.of('CancelledError', 'AGENT_ERROR', phase, 'cancelled before it finished');
}

function withDeadline<T>(work: Promise<T>, seconds: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} exceeded build_timeout_sec of ${seconds}s`)), seconds * 1000);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** Stopping is shielded: a failure to stop is logged, never allowed to replace the trial's outcome. */
async function stopQuietly(env: TrialEnvironment | undefined, recorder: TrialRecorder): Promise<void> {
  try {
    await env?.stop();
  } catch (error) {
    await recorder.log(`environment stop failed: ${(error as Error).message}`);
  }
}
