import type { ImplementationRef } from '../../runtime/protocol.ts';
import type { EnvironmentType } from './environments/environment.ts';
import type { SandboxOptions } from './environments/sandbox-environment.ts';
import { HarborBackend } from './harbor-backend.ts';
import type { RetryConfig } from './queue/retry.ts';
import { TrialQueue } from './queue/trial-queue.ts';
import type { TrialHooks } from './trial/hooks.ts';
import type { ImageMap } from '../../model/suite-options.ts';

/** What the CLI knows about a harbor suite: `backend: {type: 'harbor', taskDir, environment}` plus the run's settings. */
export interface HarborBackendSettings {
  taskDir: string;
  /** `sandbox` by default. */
  environment?: EnvironmentType;
  /** Docker: public image names (FROM lines, `docker_image`) → local images. */
  imageMap?: ImageMap;
  /** Docker: build each task image once and reuse it for every trial. */
  prebuildLocalImage?: boolean;
  /** Sandbox: `{root: 'host'}` runs on the host's root filesystem instead of the task image's; `rootfsCache`. */
  sandbox?: Pick<SandboxOptions, 'root' | 'rootfsCache'>;
  /** Sandbox and docker: processes a trial may run at once (512 by default). */
  pidsLimit?: number;
  /** Trials at once; 1 by default. */
  nConcurrent?: number;
  /** A `"module:export"` string, a suite reference, or `"oracle"`. */
  workflow: ImplementationRef;
  grader?: ImplementationRef;
  workflowConfig?: unknown;
  graderConfig?: unknown;
  /** Copied into each trial's workspace; the cwd by default. */
  userCodeDir?: string;
  trialsDir?: string;
  retry?: Partial<RetryConfig>;
  hooks?: TrialHooks;
  cleanupSuccessfulTrials?: boolean;
  chatCompletionsUrl?: string;
  apiKey?: string;
}

/** Builds a HarborBackend with its own TrialQueue: the one call the CLI makes for a harbor suite. */
export function createHarborBackend(settings: HarborBackendSettings): HarborBackend<unknown, unknown> {
  const { nConcurrent = 1, retry, hooks, environment = 'sandbox', imageMap, sandbox, pidsLimit, userCodeDir = process.cwd(), ...rest } = settings;
  return new HarborBackend<unknown, unknown>({
    ...rest,
    orchestrator: new TrialQueue({ nConcurrent, ...(retry && { retry }), ...(hooks && { hooks }) }),
    userCodeDir,
    environmentConfig: { type: environment, ...(imageMap && { imageMap }), ...(environment === 'sandbox' && sandbox), ...(pidsLimit && { pidsLimit }) },
  });
}
