/**
 * `rollout-test/node`: the main process's API — running suites programmatically, the execution backends, Harbor
 * tasks and trial queues, and the types reporters see. Loads the Node side; rollout files need only `rollout-test`.
 * @packageDocumentation
 */

export {
  MessageSchema,
  ExecutionRequestSchema,
  RolloutSampleSchema,
  ExecutionResultSchema,
  EXECUTION_STATUSES,
  ERROR_CATEGORIES,
} from '../model/index.ts';
export { TrajectorySchema, ATIF_VERSION, type Trajectory, type AtifStep } from '../model/atif/index.ts';
export { runRollouts } from '../node/api/run-rollouts.ts';
export type { RunRolloutsOptions } from '../node/api/run-rollouts-options.ts';
export type { ExecutionBackend, ResultCallback, ExecuteOptions, ModelEndpoint } from '../backends/backend.ts';
export { LocalBackend, type LocalBackendOptions } from '../backends/local/local-backend.ts';
export { DEFAULT_MAX_CONCURRENT } from '../backends/local/limits.ts';
export { HarborBackend, type HarborBackendOptions, ORACLE_AGENT } from '../backends/harbor/harbor-backend.ts';
export { createHarborBackend, type HarborBackendSettings } from '../backends/harbor/create-harbor-backend.ts';
export { TrialQueue, type TrialQueueOptions } from '../backends/harbor/queue/trial-queue.ts';
export type { RetryConfig } from '../backends/harbor/queue/retry.ts';
export { TRIAL_EVENTS, type TrialEvent, type TrialHook, type TrialHookPayload, type TrialHooks } from '../backends/harbor/trial/hooks.ts';
export { loadTask, parseTaskConfig, type HarborTask } from '../backends/harbor/task/load-task.ts';
export type { TaskConfig } from '../backends/harbor/task/task-config.ts';
export type { EnvironmentConfig } from '../backends/harbor/environments/create-environment.ts';
export type { DockerOptions } from '../backends/harbor/environments/docker/docker-environment.ts';
export type { EnvironmentType, TrialEnvironment } from '../backends/harbor/environments/environment.ts';
export type { Reporter, RunStartEvent, SuiteStartEvent } from '../node/types/reporter.ts';
export type { RunReport, SuiteReport } from '../node/types/run-report.ts';
export type { SuiteRecords } from '../node/output/suite-records.ts';
export type { RolloutRecord, RolloutStatus } from '../node/types/rollout-record.ts';
export type { RolloutDetails, TextExcerpt } from '../node/types/rollout-details.ts';
export type { SourceLocation } from '../node/stack/user-frame.ts';
export type { InfrastructureErrorRate, SuiteStatistics } from '../node/stats/index.ts';
export type { LimitShare, SuiteLimits } from '../node/output/limit-tally.ts';
export type { AppliedLimit, AppliedLimits, Enforcer, LimitName } from '../model/limits.ts';
