import type { HarborTask } from '../task/load-task.ts';
import type { TrialEnvironment } from '../environments/environment.ts';
import type { RunnerLaunch } from './runtime-entry.ts';
import type { TrialConfig } from './trial-config.ts';
import type { TrialPaths } from './trial-paths.ts';
import type { TrialRecorder } from './trial-record.ts';

/** The state of one running trial that its steps share. */
export interface TrialRun {
  config: TrialConfig;
  task: HarborTask;
  env: TrialEnvironment;
  paths: TrialPaths;
  recorder: TrialRecorder;
  signal: AbortSignal | undefined;
  launch: RunnerLaunch;
  /** Variables of runner commands: the model endpoint and its key, which reach no file. */
  runnerEnv: Record<string, string>;
}
