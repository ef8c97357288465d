import type { AppliedLimits } from '../../../model/limits.ts';

/**
 * The interface every trial environment implements (process, sandbox, docker), so that a trial's
 * lifecycle never depends on where it runs.
 */

/** The environments a trial can run in. */
export type EnvironmentType = 'process' | 'sandbox' | 'docker';

/** Where a trial's directories are, as commands inside the environment see them. */
export interface EnvironmentPaths {
  /** The working directory: the task's `workdir`, holding the user's code. */
  workspace: string;
  /** Holds `agent/`, `verifier/` and `artifacts/` (Harbor's `/logs`), which are the trial directory's own. */
  logs: string;
  /** Where the task's `tests/` are uploaded (Harbor's `/tests`). */
  tests: string;
  /** Where the task's `solution/` is uploaded for the oracle agent (Harbor's `/solution`). */
  solution: string;
}

/** The variables that tell commands where the trial's directories are (Harbor's fixed paths may differ). */
export function pathVariables(paths: EnvironmentPaths): Record<string, string> {
  return {
    ROLLOUT_WORKSPACE: paths.workspace,
    ROLLOUT_LOGS_DIR: paths.logs,
    ROLLOUT_TESTS_DIR: paths.tests,
    ROLLOUT_SOLUTION_DIR: paths.solution,
  };
}

/** Options of {@link TrialEnvironment.exec}. */
export interface ExecOptions {
  /** Working directory inside the environment; the workspace by default. */
  cwd?: string | undefined;
  /** Variables added to the environment's own; values here never reach a file. */
  env?: Record<string, string> | undefined;
  /** Kills every process the command started once this many milliseconds have passed. */
  timeoutMs?: number | undefined;
  /** Kills every process the command started when aborted. */
  signal?: AbortSignal | undefined;
  /**
   * The user to run as (`[agent]`/`[verifier] user`: a name or a uid, optionally `:group`); the environment's
   * default user when unset. The host-root sandbox and `process` run every command as the harness's user.
   */
  user?: string | number | undefined;
}

/** How a command ended. Killed commands have `timedOut` or `cancelled` set; the output is what came before. */
export interface ExecResult {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
}

/** How commands inside the environment reach the model endpoint. */
export interface EndpointRoute {
  /** The URL to use when the environment can reach the endpoint directly. */
  url: string;
  /** A unix socket (environment path) to forward a loopback port to, when the environment has no network. */
  socket?: string;
}

/** Everything an environment needs to know at construction. */
export interface EnvironmentInit {
  /** Absolute path of the trial directory. */
  trialDir: string;
  /** The host folders behind `/logs/agent`, `/logs/verifier` and `/logs/artifacts`; a separate verifier's has only `verifier`. */
  logDirs: Partial<LogDirs>;
  /** The task's `workdir`; unset, the image's WORKDIR in docker and `/workspace` in the host-backed environments. */
  workdir: string | undefined;
  /**
   * The workspace when neither task.toml nor the image names one (the image's WORKDIR is `/`): `/workspace` for a
   * workflow, whose code is copied into the workspace and must not land in the image's root.
   */
  rootWorkdirFallback?: string | undefined;
  network: 'no-network' | 'public' | 'allowlist';
  /** `[environment] env` of the task. */
  env: Record<string, string>;
  limits: ResourceLimits;
  /**
   * Host paths the trial reads at the same absolute path: the harness runtime (its built code and
   * node_modules), the node binary, the user's node_modules. This is how the runtime reaches a trial whose
   * image has no Node.
   */
  sharedPaths: string[];
  /**
   * Paths the harness copies into besides the workdir, `/tmp`, `/tests` and `/solution` (a separate verifier's
   * artifacts): with `storage_mb`, docker's root is read-only and these must be writable.
   */
  uploadPaths?: string[] | undefined;
  /** What the docker environment builds or runs; the host-backed environments ignore it. */
  image: ImageSource;
  /**
   * The user's code, when the trial runs it: the docker environment mounts a snapshot of it read-only and copies
   * it into the workspace as the container starts (see {@link TrialEnvironment.installUserCode}); the others
   * get it through `upload`.
   */
  userCode?: UserCodeSource | undefined;
}

/** The user's code to put into a trial's workspace, and the paths under it that stay out. */
export interface UserCodeSource {
  dir: string;
  /** Absolute paths never copied: the trials directory, the task's tests and solution (the agent must not see them). */
  excluded: string[];
}

/** The host folder behind each of Harbor's log folders, by name (`agent`, `verifier`, `artifacts`). */
export type LogDirs = Record<'agent' | 'verifier' | 'artifacts', string>;

/** The task's image: built from its `environment/` (a Dockerfile), or `[environment] docker_image`. */
export interface ImageSource {
  taskName: string;
  environmentDir: string | undefined;
  dockerImage: string | undefined;
  /** `[environment] build_timeout_sec`: how long a build may take. */
  buildTimeoutSec: number;
  /** `environment/docker-compose.yaml`, when the task has one: its services run beside the trial's (docker only). */
  composeFile?: string | undefined;
}

/** Limits from task.toml; each is applied where the environment can enforce it. */
export interface ResourceLimits {
  memoryMb?: number | undefined;
  storageMb?: number | undefined;
  cpus?: number | undefined;
}

/** One running trial environment: start it, run commands, move files in and out, and always stop it. */
export interface TrialEnvironment {
  readonly type: EnvironmentType;
  readonly paths: EnvironmentPaths;
  /** Prepares the environment; a rejection is a (retryable) setup failure. */
  start(signal?: AbortSignal): Promise<void>;
  exec(command: string[], options?: ExecOptions): Promise<ExecResult>;
  /** Copies a host file or directory to a path inside the environment, leaving out what `exclude` names. */
  upload(hostPath: string, envPath: string, exclude?: (hostPath: string) => boolean): Promise<void>;
  /**
   * Makes `envPath` a symbolic link to `target` from the host, when the environment can do so safely (before
   * any command could have put a link on the way); false leaves it to a command run inside.
   */
  symlink?(target: string, envPath: string): Promise<boolean>;
  /**
   * Present when the environment installs `init.userCode` into the workspace itself: resolves once it is there
   * (its `node_modules` linked), and rejects with why it could not be.
   */
  installUserCode?(): Promise<void>;
  /** Copies a file or directory inside the environment to the host. */
  download(envPath: string, hostPath: string): Promise<void>;
  /** Routes the model endpoint into the environment (through a unix socket when it has no network). */
  routeEndpoint(url: string): Promise<EndpointRoute>;
  /** Kills whatever still runs and releases everything; safe to call twice and after a failed start. */
  stop(): Promise<void>;
  /** After start: what the environment could not provide as asked (e.g. a fallback), for the trial's log. */
  readonly notes?: readonly string[];
  /** After start: whether commands run as the {@link ExecOptions.user} they are given (else as the harness's user). */
  readonly honoursUsers?: boolean;
  /** The limits (as task.toml names them) that commands have reached so far; empty when none was. */
  limitsReached?(): Promise<string[]>;
  /** After start: the limits commands run under, each with what enforces it (`none` when nothing here can). */
  appliedLimits?(): AppliedLimits;
}

/** Processes a trial may run at once unless the environment options say otherwise: a fork bomb stops here. */
export const DEFAULT_PIDS_LIMIT = 512;
