/**
 * Every CLI option, declared once: this table registers the options with the parser and so also produces
 * `--help`.
 */
export interface OptionSpec {
  flags: string;
  description: string;
  /** Options that only some commands take. */
  commands?: Array<'run' | 'list' | 'watch' | 'worker'>;
}

export const OPTIONS: OptionSpec[] = [
  { flags: '-t, --name-pattern <regex>', description: 'Only suites whose name matches this regular expression' },
  { flags: '--rows <list>', description: 'Only these dataset rows, 1-based: e.g. 1,3,5-9' },
  { flags: '-n, --runs <n>', description: 'Runs per row (each independent), overriding the suites' },
  { flags: '--max-concurrency <n>', description: 'Rollouts in flight at once per suite (default 4)' },
  { flags: '--backend <type>', description: 'Run every suite on this backend: local | harbor (harbor takes the taskDir of the config)' },
  { flags: '--env <type>', description: 'Harbor trial environment: docker | sandbox | process' },
  { flags: '--reporter <name>', description: 'default | verbose | json | junit | github-actions | html, or a module path or package; repeat for several' },
  { flags: '--outputFile <path>', description: 'Report file of json/junit; --outputFile.<reporter> <path> for one' },
  { flags: '--outputDir <dir>', description: 'Directory of the journal, samples and summary (default .rollouts)' },
  { flags: '--bail <n>', description: 'Stop after n failed or errored rollouts' },
  { flags: '--pass-threshold <reward>', description: 'Reward at or above which a rollout passes (default 1)' },
  { flags: '--threshold <reward>', description: 'Minimum mean reward of every suite; exit 1 below it' },
  { flags: '--shard <i/n>', description: 'Run only shard i of n (rows split by a stable hash); join with merge-reports' },
  { flags: '--resume', description: 'Run only the rollouts without a final result in the journal of the last run' },
  { flags: '--baseline <path>', description: 'Compare each suite with a saved run (a path, or latest)' },
  { flags: '--save-baseline [path]', description: 'Save this run as a baseline (default <outputDir>/baselines/latest.json)' },
  { flags: '--fail-on-regression', description: 'Exit 1 when a suite regressed against the baseline' },
  { flags: '--model-cache <mode>', description: 'record | replay model calls (stored under <outputDir>/model-cache)' },
  { flags: '--pass-with-no-rollouts', description: 'Exit 0 when nothing matched or a dataset has no rows (else exit 1)' },
  { flags: '--pool <kind>', description: 'Run workflows in worker threads (default) or forks (child processes)' },
  { flags: '--inline', description: 'Run workflows on the main thread (no worker pool), for debugging' },
  { flags: '--queue <url>', description: 'Run on (or, for worker, serve) a Redis queue: redis://[user:pass@]host:port/db', commands: ['run', 'worker'] },
  { flags: '--concurrency <n>', description: 'Jobs this worker runs at once (default 8)', commands: ['worker'] },
  { flags: '--config <path>', description: 'Path of the config file (default rollout.config.{ts,mts,js,mjs})' },
  { flags: '--root <dir>', description: 'Project root (default the current directory)' },
];
