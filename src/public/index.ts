/**
 * rollout-test: run and test LLM agent rollouts like tests.
 *
 * The entry of `*.rollout.ts` files and `rollout.config.ts`: `defineRollout`, `defineConfig`, the workflow and
 * grader classes, the rollout context, the errors and the data model. It loads only the runtime (what workers and
 * trials run), so that every rollout file and worker starts fast; the backends and the programmatic API are in
 * `rollout-test/node`, the scripted model server in `rollout-test/testing`, the SDK integrations in
 * `rollout-test/openai`, `rollout-test/ai-sdk` and `rollout-test/agents`.
 * @packageDocumentation
 */

export type {
  Message,
  ToolCall,
  ExecutionRequest,
  RolloutSample,
  ExecutionResult,
  ExecutionStatus,
  ErrorCategory,
  Phase,
  RolloutError,
  Timings,
  JsonObject,
  FiniteJson,
} from '../model/index.ts';
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
} from '../runtime/workflow.ts';
export {
  RolloutContext,
  getRolloutContext,
  type SampleSource,
  type RolloutContextInit,
  type ModelCacheSettings,
} from '../runtime/rollout-context.ts';
export { ValidationError, TimeoutError, HttpError, categorizeError } from '../runtime/errors.ts';
export { resolveExportRef, parseExportRef } from '../runtime/implementation.ts';
export type { ImplementationRef } from '../runtime/protocol.ts';
export {
  createRecordingFetch,
  type RecordingFetchOptions,
  ModelConnectionError,
  ModelCacheMissError,
  resolveModelCache,
  MODEL_CACHE_DIR,
  type CacheEntry,
} from '../integrations/recording/index.ts';
export { defineRollout } from '../runtime/define-rollout.ts';
export type { RolloutSuite, DatasetRow } from '../runtime/suite.ts';
export type { TimeoutsConfig, ThresholdConfig, ModelConfig, BackendConfig, ImageMap } from '../model/suite-options.ts';
export { defineConfig, type UserConfig, type ReporterSpec, type ReporterName, type ReporterOptions } from '../node/config/define-config.ts';
