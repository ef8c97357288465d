// B3's start-up, for several builds of rollout-test side by side (a before/after pair): each argument is a package
// directory (dist/, bin/, package.json, node_modules — a built checkout of another commit); the B3 workload runs
// in a project that links it, the builds alternating, `--reps` times after a warm-up each. Prints, per build, the
// medians of wall time and of CPU time (user + system, every thread: the growth of this process's cutime + cstime
// while the CLI ran), and a bare `node -e 0` measured the same way, with the load average.
//   node bench/start-pair.mjs /path/to/before /path/to/after [--reps 11]
import { symlinkSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuMsOf, measure, median } from './lib/measure.mjs';
import { b3, benchRoot } from './lib/workloads.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { reps: { type: 'string', default: '11' } } });
if (positionals.length === 0) throw new Error('usage: node bench/start-pair.mjs <package dir>... [--reps n]');

/** One B3 project per build, its node_modules/rollout-test linked to that build. */
const projects = positionals.map((pkg, i) => {
  const { rollout } = b3(benchRoot());
  const link = path.join(rollout, 'node_modules/rollout-test');
  unlinkSync(link);
  symlinkSync(path.resolve(pkg), link, 'dir');
  return { name: positionals.length > 1 ? `${i + 1}: ${pkg}` : pkg, dir: rollout, bin: path.join(link, 'bin/rollout-test.js'), runs: [] };
});
const bare = { name: 'bare node -e 0', runs: [] };

async function timed(command, args, cwd) {
  const before = cpuMsOf('self', { children: true });
  const result = await measure(command, args, { cwd });
  if (result.code !== 0) throw new Error(`${args.join(' ')} exited with ${result.code}: ${result.stderr}`);
  return { wallMs: result.wallMs, cpuMs: cpuMsOf('self', { children: true }) - before };
}

const run = (project) => timed(process.execPath, [project.bin, 'run', '--reporter', 'json', '--outputFile', 'report.json'], project.dir);
const loadBefore = os.loadavg()[0];
for (const project of projects) await run(project);
for (let i = 0; i < Number(values.reps); i++) {
  bare.runs.push(await timed(process.execPath, ['-e', '0'], os.tmpdir()));
  for (const project of projects) project.runs.push(await run(project));
}
console.log(`load average ${loadBefore.toFixed(1)} → ${os.loadavg()[0].toFixed(1)}; medians of ${values.reps}`);
for (const { name, runs } of [...projects, bare]) {
  const m = (key) => Math.round(median(runs.map((r) => r[key])));
  console.log(`${name}: wall ${m('wallMs')} ms, CPU ${m('cpuMs')} ms`);
}
