// Builds dist/ the way Vitest ships its own: the code bundled by esbuild into a few files, each entry at the
// path package.json, bin/ and the runtime name it by (its path under src/, .js), and the code two entries share
// in shared chunks under dist/chunks/, so it loads (and holds its state) once — a user's rollout file that
// imports `rollout-test` in a worker shares the worker runtime's modules, as it did unbundled. Loading a handful
// of files instead of ~250 ES modules is most of what start-up costs. Types stay tsc's: one .d.ts per source
// file, as before. Usage: node scripts/build.mjs (npm run build). Exits 1 when esbuild fails, else with tsc's
// status (2 = type errors; everything was still emitted). `--no-declarations` (rollout-test's own test setup, which
// runs the built CLI) builds only the JavaScript, and leaves the declarations of an earlier build in place.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = path.join(ROOT, 'dist');

/** Every file something loads by its own path: the package's exports, bin's imports, the workers' and trials' entries. */
const ENTRIES = [
  'public/index.ts',
  'public/node.ts',
  'public/testing.ts',
  'public/openai.ts',
  'public/ai-sdk.ts',
  'public/agents.ts',
  'node/cli/main.ts',
  'node/cli/early-pool.ts',
  'node/cli/process-title.ts',
  'runtime/worker-entry.js',
  'runtime/worker.ts',
  'runtime/module-versions-hooks.ts',
  'runtime/ts-loader/hooks.ts',
  'runtime/trial-runner.ts',
];

/**
 * Files read at run time rather than imported: the HTML report's page script, with uPlot, bundled for the browser
 * here, at the same path under dist/ (a report from the sources bundles it as it writes, see html/page.ts).
 */
const PAGE_SCRIPT = 'node/reporters/html/app/app.js';

/**
 * Dependencies bundled in: those of many files on the way to a run's first rollout, whose load time bundling cuts
 * (zod: 95 ES modules, 77 → 18 ms of CPU once only the functions used are kept; fast-glob: ~25 CommonJS
 * modules, 37 → 15 ms of CPU). The rest stay imports of the installed package: packages that load files of their
 * own by path (tinypool's worker), optional peers (openai, ai, @openai/agents), and whatever loads
 * lazily, off the start-up path.
 */
const BUNDLED = new Set(['zod', 'cac', 'fast-glob']);

/** Bundled CommonJS (fast-glob) requires Node's built-ins through `require`, which an ES module has to make. */
const REQUIRE = "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/** The package a bare specifier names: `zod/v4` → `zod`, `@scope/pkg/sub` → `@scope/pkg`. */
const packageName = (specifier) => specifier.split('/', specifier.startsWith('@') ? 2 : 1).join('/');

/** Packages our code imports stay imports, but those in BUNDLED, with everything they import in turn. */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, ({ path: specifier, importer }) => {
      const bundled = specifier.startsWith('node:') || BUNDLED.has(packageName(specifier)) || importer.includes(`${path.sep}node_modules${path.sep}`);
      return bundled ? undefined : { path: specifier, external: true };
    });
  },
};

/** Removes the previous build: all of it, or all but its declarations. */
function clean(keepDeclarations) {
  if (!keepDeclarations || !existsSync(DIST)) return rmSync(DIST, { recursive: true, force: true });
  for (const entry of readdirSync(DIST, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && !entry.name.endsWith('.d.ts')) rmSync(path.join(entry.parentPath, entry.name));
  }
}

async function bundle() {
  await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES.map((entry) => path.join('src', entry)),
    outdir: 'dist',
    outbase: 'src',
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    sourcesContent: false,
    banner: { js: REQUIRE },
    plugins: [externalPackages],
    logLevel: 'warning',
  });
  // Each report would otherwise start an esbuild process for it: ~100 ms of CPU.
  await build({ absWorkingDir: ROOT, entryPoints: [path.join('src', PAGE_SCRIPT)], outfile: path.join('dist', PAGE_SCRIPT), bundle: true, format: 'iife', minify: true, platform: 'browser', logLevel: 'warning' });
}

/** tsc's declarations, one .d.ts per source file. */
function declarations() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  return result.status ?? 1;
}

const withDeclarations = !process.argv.includes('--no-declarations');
clean(!withDeclarations);
try {
  await bundle();
} catch {
  // esbuild has printed its errors.
  process.exit(1);
}
if (withDeclarations) process.exitCode = declarations();
