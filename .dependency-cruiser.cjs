/**
 * The architecture of `src/`, checked by `npm run lint` (dependency-cruiser over `src/`). Each rule below is one
 * sentence of it, and its `comment` is what a failing lint prints. Arrows read "is imported by": a layer imports
 * only the layers below it, never one above.
 *
 * Top level:
 *
 *   model  <-  runtime  <-  backends, integrations, testing  <-  node  <-  public
 *
 * - `model/`: the data a rollout takes and produces (zod schemas of requests, samples, results and the suite
 *   options, and the types inferred from them).
 * - `runtime/`: what runs in workers and trials: workflow and grader classes, the rollout context, phases, fault
 *   handling, the worker and trial entries, and the typed messages between them and the main process.
 * - `backends/` (the local worker pool, Harbor trials), `integrations/` (model clients and the recording of their
 *   calls) and `testing/` (the scripted model server): three peers on the runtime; none imports another.
 * - `node/`: the main process (CLI, config, scheduling, reporters, watch, serve, queue).
 * - `public/`: the package's entry points, one file per `exports` entry; they re-export what is below.
 * - `package-files.ts` is the one file at the top of `src/`, beside the layers rather than in one: where the
 *   package's own files are, which the runtime, the backends and the main process all ask. It imports nothing of
 *   the project, so every layer may use it.
 *
 * Inside `src/node/`, two tiers:
 *
 * - Lower, what a run is made of: `types` (the shapes reports and reporters share), `errors.ts`, `stats` (pure
 *   statistics), `cost` (token usage and prices), `dataset` (rows), `output` (the journal, its records and the
 *   run's files), `config` (the config file, and the CLI flags that override it). `stack` (the user's frame of a
 *   stack trace, which reports carry), `discovery` (the rollout files and their suites, as the config finds them)
 *   and `baseline` (saved runs to compare with) belong here too: they import only lower folders, and upper ones
 *   use them. The lower tier never imports the upper one, so a change to how runs are driven cannot ripple into
 *   the shapes and files they are built on.
 * - Upper, what drives a run: `reporters`, `run`, `watch`, `serve`, `queue`, and the two entry points on top,
 *   `cli` (the command line) and `api` (the programmatic `runRollouts`). Nothing but `cli` itself imports `cli`,
 *   and nothing but `cli` imports `api`: what another folder needs of them (option types, signal names) belongs
 *   to a lower folder.
 *
 * No import cycles anywhere, type-only imports included (`tsPreCompilationDeps`): a cycle ties every file in it
 * to every other, whatever the layers say.
 */
const NODE_LOWER = '^src/node/(types/|errors\\.ts$|stats/|cost/|dataset/|output/|config/|stack/|discovery/|baseline/)';
const NODE_UPPER = '^src/node/(reporters|run|watch|serve|queue|cli|api)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'An import cycle (type-only imports count): move the shared part down to a module both can import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'model-is-the-base',
      severity: 'error',
      comment: 'src/model imports nothing else of src/.',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/model/' },
    },
    {
      name: 'runtime-above-model-only',
      severity: 'error',
      comment: 'src/runtime imports only src/model (and package-files.ts).',
      from: { path: '^src/runtime/' },
      to: { path: '^src/', pathNot: '^src/(model/|runtime/|package-files\\.ts$)' },
    },
    {
      name: 'backends-integrations-testing-above-runtime',
      severity: 'error',
      comment: 'src/backends, src/integrations and src/testing import only src/runtime, src/model (and package-files.ts), never each other.',
      from: { path: '^src/(backends|integrations|testing)/' },
      to: { path: '^src/', pathNot: ['^src/(model|runtime)/', '^src/package-files\\.ts$', '^src/$1/'] },
    },
    {
      name: 'node-below-public',
      severity: 'error',
      comment: 'src/node (the main process) never imports src/public: the entry points re-export it, not the reverse.',
      from: { path: '^src/node/' },
      to: { path: '^src/public/' },
    },
    {
      name: 'package-files-is-a-leaf',
      severity: 'error',
      comment: 'src/package-files.ts imports nothing of the project, so every layer may use it.',
      from: { path: '^src/package-files\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'node-lower-never-imports-upper',
      severity: 'error',
      comment: 'Inside src/node, types, errors, stats, cost, stack, dataset, output, config, discovery and baseline never import reporters, run, watch, serve, queue, cli or api.',
      from: { path: NODE_LOWER },
      to: { path: NODE_UPPER },
    },
    {
      name: 'only-cli-imports-cli',
      severity: 'error',
      comment: 'src/node/cli is the top of the main process: what other folders need from it belongs in a lower one (config, types).',
      from: { path: '^src/', pathNot: '^src/node/cli/' },
      to: { path: '^src/node/cli/' },
    },
    {
      name: 'only-cli-imports-api',
      severity: 'error',
      comment: 'src/node/api is an entry point beside cli: only cli (and src/public) import it.',
      from: { path: '^src/node/', pathNot: '^src/node/(cli|api)/' },
      to: { path: '^src/node/api/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
