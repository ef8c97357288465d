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
export type { ExecutionBackend, ResultCallback, ExecuteOptions } from './backends/backend.ts';
export { LocalBackend, type LocalBackendOptions, DEFAULT_MAX_CONCURRENT } from './backends/local/local-backend.ts';
