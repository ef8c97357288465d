import type { ImplementationRef } from '../../runtime/protocol.ts';
import type { EnvironmentType } from './environments/environment.ts';
import type { SandboxOptions } from './environments/sandbox-environment.ts';
import { HarborBackend, type HarborBackendOptions } from './harbor-backend.ts';
import type { RetryConfig } from './queue/retry.ts';
import { TrialQueue } from './queue/trial-queue.ts';
import type { TrialHooks } from './trial/hooks.ts';
import type { ImageMap } from '../../model/suite-options.ts';

/** What the CLI knows about a harbor suite: `backend: {type: 'harbor', taskDir, environment}` plus the run's settings. */
export interface HarborBackendSettings {
  taskDir: string;
  /** `sandbox` by default. */
  environment?: EnvironmentType | undefined;
  /** Docker: public image names (FROM lines, `docker_image`) → local images. */
  imageMap?: ImageMap | undefined;
  /** Docker: build each task image once and reuse it for every trial. */
  prebuildLocalImage?: boolean | undefined;
  /** Docker: keep `nConcurrent` started containers ready, each used by one trial (see {@link HarborBackendOptions.prewarm}). */
  prewarm?: boolean | undefined;
  /** Sandbox: `{root: 'host'}` runs on the host's root filesystem instead of the task image's; `rootfsCache`. */
  sandbox?: Pick<SandboxOptions, 'root' | 'rootfsCache'> | undefined;
  /** Sandbox and docker: processes a trial may run at once (512 by default). */
  pidsLimit?: number | undefined;
  /** Trials at once; 1 by default. */
  nConcurrent?: number | undefined;
  /** A `"module:export"` string, a suite reference, or `"oracle"`. */
  workflow: ImplementationRef;
  grader?: ImplementationRef | undefined;
  workflowConfig?: unknown | undefined;
  graderConfig?: unknown | undefined;
  /** Copied into each trial's workspace; the cwd by default. */
  userCodeDir?: string | undefined;
  trialsDir?: string | undefined;
  retry?: Partial<RetryConfig> | undefined;
  hooks?: TrialHooks | undefined;
  cleanupSuccessfulTrials?: boolean | undefined;
  chatCompletionsUrl?: string | undefined;
  apiKey?: string | undefined;
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
