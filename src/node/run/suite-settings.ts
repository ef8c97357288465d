import type { AgentWorkflowConfig } from '../../runtime/workflow.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ThresholdConfig } from '../../model/suite-options.ts';
import type { BackendConfig, TimeoutsConfig } from '../../model/suite-options.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';

/** Concurrency of a suite when nothing sets it: the seed SDK's default. */
export const DEFAULT_CONCURRENCY = 4;

/** What one suite runs with. Precedence: a CLI flag, then the suite, then the config file, then the default. */
export interface SuiteSettings {
  runs: number;
  passThreshold: number;
  thresholds: ThresholdConfig;
  /** `null` means no limit. */
  concurrency: number | null;
  timeouts: TimeoutsConfig;
  backend: BackendConfig;
  workflowConfig: AgentWorkflowConfig;
}

/**
 * The reward at or above which a rollout passes: the flag, else the suite's (when there is a suite), else the
 * config file's, else 1.
 */
export function passThresholdOf(config: ResolvedConfig, suite?: RolloutSuite<any, any>): number {
  return config.flagLayer.passThreshold ?? suite?.passThreshold ?? config.configLayer.passThreshold ?? 1;
}

function suiteConcurrency(suite: RolloutSuite<any, any>): number | null | undefined {
  const concurrency = (suite.workflowConfig as AgentWorkflowConfig | undefined)?.concurrency;
  return concurrency && 'maxConcurrent' in concurrency ? concurrency.maxConcurrent : undefined;
}

function asThresholds(threshold: number | ThresholdConfig | undefined): ThresholdConfig {
  return typeof threshold === 'number' ? { meanReward: threshold } : (threshold ?? {});
}

export function suiteSettings(suite: RolloutSuite<any, any>, config: ResolvedConfig): SuiteSettings {
  const { flagLayer: flags, configLayer: file } = config;
  const concurrency = flags.concurrency ?? suiteConcurrency(suite) ?? file.concurrency ?? DEFAULT_CONCURRENCY;
  const workflowConfig = { ...(suite.workflowConfig as AgentWorkflowConfig | undefined), concurrency: { maxConcurrent: concurrency } };
  return {
    runs: flags.runs ?? suite.n ?? file.runs ?? 1,
    passThreshold: passThresholdOf(config, suite),
    thresholds: { ...asThresholds(file.threshold), ...asThresholds(suite.threshold), ...asThresholds(flags.threshold) },
    concurrency,
    timeouts: { ...file.timeouts, ...suite.timeouts },
    backend: (config.backendFromFlag ? config.backend : undefined) ?? suite.backend ?? config.backend ?? { type: 'local' },
    workflowConfig,
  };
}
