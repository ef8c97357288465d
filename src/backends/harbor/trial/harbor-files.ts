import { pathToFileURL } from 'node:url';
import type { ImplementationRef } from '../../../runtime/protocol.ts';
import type { HarborTask } from '../task/load-task.ts';
import type { TrialConfig } from './trial-config.ts';
import { taskVerifierMode } from './phases.ts';
import type { TrialIdentity } from './trial-record.ts';
import { packageVersion } from '../../../package-files.ts';
import {
  AGENT_CONFIG_DEFAULTS,
  ENVIRONMENT_CONFIG_DEFAULTS,
  TASK_CONFIG_DEFAULTS,
  TRIAL_CONFIG_DEFAULTS,
  TRIAL_LOCK_DEFAULTS,
  VERIFIER_CONFIG_DEFAULTS,
} from './harbor-defaults.ts';

/** Harbor's `AgentConfig` of a trial: the oracle by name, a workflow by its import path and config. */
function agentConfig(config: TrialConfig): Record<string, unknown> {
  const override = config.request.agentTimeoutSec ?? undefined;
  const agent = config.agent.kind === 'oracle'
    ? { name: 'oracle' }
    : { import_path: implementationName(config.agent.implementation), ...(config.agent.config !== undefined && { kwargs: { config: config.agent.config } }) };
  return { ...agent, ...(override !== undefined && { override_timeout_sec: override }) };
}

/** A workflow's name for Harbor: its `"module:export"`, or the suite it is the workflow of. */
function implementationName(ref: ImplementationRef): string {
  return typeof ref === 'string' ? ref : `${ref.file}#${ref.suite}.${ref.role}`;
}

/** The agent's name in result.json's `agent_info` and in its trajectory: `oracle`, or the workflow's name for Harbor. */
export function agentInfoName(config: TrialConfig): string {
  return config.agent.kind === 'oracle' ? 'oracle' : implementationName(config.agent.implementation);
}

/**
 * Harbor's `EnvironmentConfig`: docker is one of its types; the host-backed environments are not, so they are
 * named by an import path (Harbor's way to name an environment it does not ship).
 */
function environmentConfig(config: TrialConfig): Record<string, unknown> {
  const { type, ...options } = config.environment;
  const kwargs = Object.keys(options).length ? { kwargs: options } : {};
  return type === 'docker' ? { type, ...kwargs } : { import_path: `rollout-test:${type}`, ...kwargs };
}

function verifierConfig(config: TrialConfig): Record<string, unknown> {
  const override = config.request.graderTimeoutSec ?? undefined;
  return override === undefined ? {} : { override_timeout_sec: override };
}

/** Harbor's `AgentConfig`, `EnvironmentConfig` and `VerifierConfig` of a trial, every field written. */
function trialParts(config: TrialConfig) {
  return {
    agent: { ...AGENT_CONFIG_DEFAULTS, ...agentConfig(config) },
    environment: { ...ENVIRONMENT_CONFIG_DEFAULTS, ...environmentConfig(config) },
    verifier: { ...VERIFIER_CONFIG_DEFAULTS, ...verifierConfig(config) },
  };
}

/**
 * `config.json`: Harbor's `TrialConfig` with every field Harbor writes (defaults included), so that Harbor's
 * own tools read the trial; this harness's own trial config (no secret in it) under `rollout_test`.
 */
export function harborTrialConfig(config: TrialConfig): Record<string, unknown> {
  return {
    task: { path: config.taskDir, ...TASK_CONFIG_DEFAULTS },
    trial_name: config.trialName,
    trials_dir: config.trialsDir,
    ...TRIAL_CONFIG_DEFAULTS,
    ...trialParts(config),
    rollout_test: config,
  };
}

/** `lock.json`: Harbor's `TrialLock` with every field, the resolved inputs of the trial, with the task's content digest. */
export function harborTrialLock(config: TrialConfig, task: HarborTask): Record<string, unknown> {
  const version = (task.config.task as { version?: unknown }).version;
  const { agent, environment, verifier } = trialParts(config);
  return {
    schema_version: 2,
    task: { name: task.dir.split('/').at(-1), version: typeof version === 'string' ? version : null, type: 'local', digest: `sha256:${task.digest}`, source: null, path: task.dir, git_url: null, git_commit_id: null },
    ...TRIAL_LOCK_DEFAULTS,
    agent,
    environment,
    verifier: { ...verifier, environment_mode: task.steps.length === 0 ? taskVerifierMode(task.config) : null },
  };
}

/** The identity fields of result.json; `task_checksum` is Harbor's `dirhash(task_dir, "sha256")`. */
export function trialIdentity(config: TrialConfig, task: HarborTask, trialDir: string): TrialIdentity {
  const oracle = config.agent.kind === 'oracle';
  return {
    trial_name: config.trialName,
    trial_uri: pathToFileURL(trialDir).href,
    task_name: task.name,
    task_id: { path: task.dir },
    task_checksum: task.checksum,
    config: harborTrialConfig(config),
    agent_info: oracle ? { name: 'oracle', version: '1.0.0', model_info: null } : { name: agentInfoName(config), version: packageVersion(), model_info: null },
    verifier_environment_mode: task.steps.length === 0 ? taskVerifierMode(task.config) : null,
    task_dir: task.dir,
    rollout_id: config.request.id,
    environment_type: config.environment.type,
  };
}
