/**
 * rollout-test: run and test LLM agent rollouts like tests.
 *
 * This is the package's public API: the data model, the workflow and grader classes, the rollout context,
 * the execution backends, and the helpers for `*.rollout.ts` files and `rollout.config.ts`.
 * @packageDocumentation
 */

export {
  type Message,
  type ToolCall,
  MessageSchema,
  type ExecutionRequest,
  ExecutionRequestSchema,
  type RolloutSample,
  RolloutSampleSchema,
  type ExecutionResult,
  ExecutionResultSchema,
  type RolloutStatus,
  ROLLOUT_STATUSES,
  type ErrorCategory,
  ERROR_CATEGORIES,
  type Phase,
  type RolloutError,
  type Timings,
  type JsonObject,
  type FiniteJson,
} from './model/index.ts';
export {
  AgentWorkflow,
  Grader,
  type AgentWorkflowContext,
  type GraderContext,
  type AgentWorkflowConfig,
  type GraderConfig,
  type ConcurrencyConfig,
  type WorkflowOutput,
  type WorkflowResult,
  type GradeResult,
  type SetRewardOptions,
  type RolloutLogger,
  type WorkflowFunction,
  type GraderFunction,
  type WorkflowSpec,
  type GraderSpec,
} from './runtime/workflow.ts';
export {
  RolloutContext,
  getRolloutContext,
  type SampleSource,
  type RolloutContextInit,
  type ModelCacheSettings,
} from './runtime/rollout-context.ts';
export { ValidationError, TimeoutError, HttpError, categorizeError } from './runtime/errors.ts';
export { resolveExportRef, parseExportRef } from './runtime/implementation.ts';
export type { ImplementationRef } from './runtime/protocol.ts';
export type { ExecutionBackend, ResultCallback, ExecuteOptions, ModelEndpoint } from './backends/backend.ts';
export { LocalBackend, type LocalBackendOptions } from './backends/local/local-backend.ts';
export { DEFAULT_MAX_CONCURRENT } from './backends/local/limits.ts';
export {
  RecordingOpenAI,
  createRecordingClient,
  type RecordingClientOptions,
} from './integrations/openai/index.ts';
export {
  createRecordingFetch,
  type RecordingFetchOptions,
  ModelConnectionError,
  ModelCacheMissError,
  resolveModelCache,
  MODEL_CACHE_DIR,
  type CacheEntry,
} from './integrations/recording/index.ts';
export {
  startModelServer,
  startModelServerFromSpec,
  echoScript,
  calculatorScript,
  withFaultDirectives,
  type ModelServer,
  type ModelServerOptions,
  type LoggedRequest,
  type ModelScript,
  type ScriptRequest,
  type ScriptReply,
  type ScriptToolCall,
  type ScriptFailure,
} from './testing/model-server/index.ts';
export { HarborBackend, type HarborBackendOptions, ORACLE_AGENT } from './backends/harbor/harbor-backend.ts';
export { createHarborBackend, type HarborBackendSettings } from './backends/harbor/create-harbor-backend.ts';
export { TrialQueue, type TrialQueueOptions } from './backends/harbor/queue/trial-queue.ts';
export type { RetryConfig } from './backends/harbor/queue/retry.ts';
export { TRIAL_EVENTS, type TrialEvent, type TrialHook, type TrialHookPayload, type TrialHooks } from './backends/harbor/trial/hooks.ts';
export { loadTask, parseTaskConfig, type HarborTask } from './backends/harbor/task/load-task.ts';
export type { TaskConfig } from './backends/harbor/task/task-config.ts';
export type { EnvironmentConfig } from './backends/harbor/environments/create-environment.ts';
export type { DockerOptions } from './backends/harbor/environments/docker/docker-environment.ts';
export type { EnvironmentType, TrialEnvironment } from './backends/harbor/environments/environment.ts';
export { defineRollout } from './runtime/define-rollout.ts';
export type { RolloutSuite, DatasetRow, TimeoutsConfig, BackendConfig } from './runtime/suite.ts';
export { defineConfig, type UserConfig, type ReporterSpec, type ReporterName } from './node/config/define-config.ts';
export { runRollouts, type RunRolloutsOptions } from './node/api/run-rollouts.ts';
export type { Reporter, RunStartEvent, SuiteStartEvent } from './node/reporters/reporter.ts';
export type { ReporterOptions } from './node/config/define-config.ts';
export type { RunReport, SuiteReport } from './node/run/run-report.ts';
export type { RolloutRecord } from './node/run/rollout-record.ts';
export type { RolloutDetails, TextExcerpt } from './node/run/rollout-details.ts';
export type { SourceLocation } from './node/stack/user-frame.ts';
export type { SuiteStatistics } from './node/stats/index.ts';
