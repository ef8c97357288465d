#!/usr/bin/env node
// CPU per no-op workflow phase on one thread, through the runtime's own `runWorkflowPhase` (what a worker runs for
// each rollout, without the thread protocol): `node bench/phase-cost.mjs [count]`. It loads the TypeScript sources
// (the bundled dist/ has no module of its own for them). Add `--trace-gc` to see what survives young-generation
// collections.
const { register } = await import('tsx/esm/api');
register();
const { installFaultHandlers } = await import('../src/runtime/faults.ts');
const { runWorkflowPhase } = await import('../src/runtime/phases.ts');

// As in a worker: the fault handlers, whose AsyncLocalStorage makes every promise cost its hooks.
installFaultHandlers();
const count = Number(process.argv[2] ?? 10_000);
const BATCH = 36;
const invoke = async () => undefined;
const input = (i) => ({
  request: { id: `r${i}`, prompt: [{ role: 'user', content: `row ${i}` }], label: null, metadata: null },
  config: {},
  artifactsDir: `/nonexistent/${i}`,
  deadline: null,
});
const before = process.cpuUsage();
for (let i = 0; i < count; i += BATCH) {
  await Promise.all(Array.from({ length: BATCH }, (_, j) => runWorkflowPhase(invoke, input(i + j))));
  await new Promise((resolve) => setImmediate(resolve));
}
const { user, system } = process.cpuUsage(before);
console.log(`${count} no-op phases, ${BATCH} at a time: ${((user + system) / count).toFixed(1)} µs of CPU each`);
