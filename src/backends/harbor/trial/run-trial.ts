import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createEnvironment } from '../environments/create-environment.ts';
import type { TrialEnvironment } from '../environments/environment.ts';
import type { HarborTask } from '../task/load-task.ts';
import { type AgentOutcome, runAgent } from './agent.ts';
import type { EmitTrialEvent } from './hooks.ts';
import { type RunnerLaunch, trialRunnerLaunch } from './runtime-entry.ts';
import type { TrialConfig } from './trial-config.ts';
import { TrialError, type TrialErrorType } from './trial-error.ts';
import { TrialPaths, trialDirOf } from './trial-paths.ts';
import { TrialRecorder, type TrialResultFile } from './trial-record.ts';
import type { TrialRun } from './trial-run.ts';
import { type VerifierOutcome, runVerifier } from './verifier.ts';
import { installUserCode, userNodeModules } from './workspace.ts';

/** How a trial ended. `agent` and `verifier` are set when those steps ran. */
export interface TrialOutcome {
  trialDir: string;
  record: TrialResultFile;
  /** The first exception, as in result.json. */
  error: TrialError | undefined;
  cancelled: boolean;
  agent?: AgentOutcome;
  verifier?: VerifierOutcome;
  timings: TrialTimings;
}

/** Time spent waiting for a slot, and per-step durations, for the rollout's timings. */
export interface TrialTimings {
  queuedMs: number;
  environmentSetupMs: number;
  agentSetupMs: number;
  agentMs: number;
  verifierMs: number;
}

/** What a trial needs besides its config. */
export interface TrialContext {
  task: HarborTask;
  /** The model's API key: given to the runner's environment, never written. */
  apiKey?: string | undefined;
  signal?: AbortSignal | undefined;
  emit: EmitTrialEvent;
  /** Milliseconds the trial waited for a slot. */
  queuedMs?: number;
  /** Called when verification starts, with what the agent produced (SPEC §5: `onWorkflowComplete` goes here). */
  onVerificationStart?: (agent: AgentOutcome, timings: TrialTimings) => Promise<void>;
}

/**
 * Runs one Harbor trial: environment start → user code into the workspace → agent → verification → stop,
 * writing Harbor's trial directory as it goes. The environment is stopped on every path. An agent timeout
 * is recorded and the trial still verifies, as in Harbor; other agent failures skip verification.
 */
export async function runTrial(config: TrialConfig, context: TrialContext): Promise<TrialOutcome> {
  const { paths, recorder } = await openTrialDir(config, context.task);
  await context.emit('trial-started');
  const outcome: Pick<TrialOutcome, 'agent' | 'verifier'> = {};
  const launch = trialRunnerLaunch();
  let env: TrialEnvironment | undefined;
  try {
    await step(recorder, 'environment_setup', 'EnvironmentStartError', context.signal, async () => {
      env = createTrialEnvironment(config, context.task, paths, launch);
      await withDeadline(env.start(context.signal), context.task.config.environment.build_timeout_sec, 'environment start');
      for (const note of env.notes ?? []) await recorder.log(note);
    });
    await context.emit('environment-started');
    const run: TrialRun = { config, task: context.task, env: env!, paths, recorder, signal: context.signal, launch, runnerEnv: {} };
    await step(recorder, 'agent_setup', 'AgentSetupError', context.signal, () => setUpAgent(run, context.apiKey));
    await runSteps(run, context, outcome);
  } catch (error) {
    await recorder.fail(error instanceof TrialError ? error : TrialError.of('HarnessError', 'AGENT_ERROR', 'setup', error));
  } finally {
    await stopQuietly(env, recorder);
  }
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
  };
}

/** Creates the trial directory with its config.json, and the recorder of its result. */
async function openTrialDir(config: TrialConfig, task: HarborTask): Promise<{ paths: TrialPaths; recorder: TrialRecorder }> {
  const paths = new TrialPaths(trialDirOf(config));
  for (const dir of [paths.agentDir, paths.verifierDir, paths.artifactsDir]) await mkdir(dir, { recursive: true });
  await writeFile(paths.configFile, `${JSON.stringify(config, null, 2)}\n`);
  const recorder = new TrialRecorder(paths, {
    trial_name: config.trialName,
    task_name: task.name,
    task_dir: task.dir,
    rollout_id: config.request.id,
    environment_type: config.environment.type,
  });
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

/** The environment of a trial, sharing the harness runtime and the user's node_modules with it. */
function createTrialEnvironment(config: TrialConfig, task: HarborTask, paths: TrialPaths, launch: RunnerLaunch): TrialEnvironment {
  const { environment } = task.config;
  const modules = userNodeModules(config.userCodeDir);
  return createEnvironment(config.environment, {
    trialDir: paths.dir,
    workdir: environment.workdir,
    network: environment.network_mode,
    env: environment.env,
    limits: { memoryMb: environment.memory_mb, storageMb: environment.storage_mb, cpus: environment.cpus },
    sharedPaths: [...launch.sharedPaths, ...(modules ? [modules] : [])],
    image: {
      taskName: task.name,
      environmentDir: task.environmentDir,
      dockerImage: environment.docker_image,
      buildTimeoutSec: environment.build_timeout_sec,
    },
  });
}

/** Copies the user code in and routes the model endpoint; the key goes to the runner's environment only. */
async function setUpAgent(run: TrialRun, apiKey: string | undefined): Promise<void> {
  await installUserCode(run.env, { dir: run.config.userCodeDir, excluded: excludedFrom(run) });
  const url = run.config.chatCompletionsUrl;
  if (url) {
    const route = await run.env.routeEndpoint(url);
    run.runnerEnv.ROLLOUT_CHAT_COMPLETIONS_URL = route.url;
    if (route.socket) run.runnerEnv.ROLLOUT_MODEL_SOCKET = route.socket;
  }
  if (apiKey) run.runnerEnv.ROLLOUT_API_KEY = apiKey;
}

function excludedFrom(run: TrialRun): string[] {
  const { task, config } = run;
  return [path.resolve(config.trialsDir), task.testsDir, task.solutionDir].filter((dir): dir is string => dir !== undefined);
}

/** Agent, then verification unless the agent failed for another reason than its deadline. */
async function runSteps(run: TrialRun, context: TrialContext, outcome: Pick<TrialOutcome, 'agent' | 'verifier'>): Promise<void> {
  const { recorder } = run;
  await context.emit('agent-started');
  const agent = await recorder.step('agent_execution', async () => withLimitError(run, 'workflow', await runAgent(run)));
  outcome.agent = agent;
  await context.emit('agent-ended');
  if (agent.error) await recorder.fail(agent.error);
  if (agent.error && agent.error.type !== 'AgentTimeoutError') return;
  throwIfCancelled(context.signal, 'workflow');
  await context.onVerificationStart?.(agent, timingsOf(recorder, context));
  await context.emit('verification-started');
  const verifier = await recorder.step('verifier', async () => withLimitError(run, 'grader', await runVerifier(run, agent)));
  outcome.verifier = verifier;
  if (verifier.error) await recorder.fail(verifier.error);
  recorder.result.agent_result = { n_samples: agent.samples.length, metrics: sumMetrics(agent) };
  recorder.result.verifier_result = { rewards: verifier.rewards };
}

/**
 * A phase that made the trial reach a limit of task.toml fails with that limit named, whatever it returned:
 * a fork bomb's failed forks or an OOM-killed child need not fail the command that started them.
 */
async function withLimitError<T extends { error?: TrialError | undefined }>(run: TrialRun, phase: 'workflow' | 'grader', outcome: T): Promise<T> {
  const reached = (await run.env.limitsReached?.()) ?? [];
  if (!reached.length || outcome.error?.type === 'ResourceLimitError') return outcome;
  const message = `the trial reached ${reached.join(' and ')}${outcome.error ? ` (then: ${outcome.error.message})` : ''}`;
  return { ...outcome, error: TrialError.of('ResourceLimitError', 'AGENT_ERROR', phase, message) };
}

/** Token and cost counts of the samples, summed (Harbor's `agent_result`). */
function sumMetrics(agent: AgentOutcome): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const sample of agent.samples) {
    for (const [name, value] of Object.entries(sample.metrics)) totals[name] = (totals[name] ?? 0) + value;
  }
  return totals;
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
