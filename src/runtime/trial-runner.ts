/**
 * The entry that runs inside a trial environment (with the host's node, from the built package): reads a
 * {@link TrialRunnerSpec}, runs the workflow or grader phase, and writes the outcome where the harness reads
 * it back (`/logs/agent/...` or `/logs/verifier/...`). Usage: `node trial-runner.js <spec.json>`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { installFaultHandlers, interceptProcessExit } from './faults.ts';
import { runGraderPhase, runWorkflowPhase, setupFailure, type GraderPhaseOutcome, type WorkflowPhaseOutcome } from './phases.ts';
import { resolveImplementation } from './resolve-implementation.ts';
import { startForwarder } from './trial-bridge.ts';
import { TRIAL_ENV, type TrialRunnerSpec } from './trial-protocol.ts';

/**
 * Without network, the model endpoint is reached through the harness's unix socket: a loopback port inside
 * the trial forwards to it, and the endpoint URL is rewritten to that port for the workflow and its children.
 * The bridge carries plain HTTP (a local or proxied model server); an https endpoint needs a task with network.
 */
async function bridgeModelEndpoint(): Promise<void> {
  const socket = process.env[TRIAL_ENV.modelSocket];
  const original = process.env[TRIAL_ENV.chatCompletionsUrl];
  if (!socket || !original) return;
  const forwarder = await startForwarder({ host: '127.0.0.1', port: 0 }, { path: socket });
  const url = new URL(original);
  url.protocol = 'http:';
  url.hostname = '127.0.0.1';
  url.port = String(forwarder.port);
  process.env[TRIAL_ENV.chatCompletionsUrl] = url.href;
}

async function runPhase(spec: TrialRunnerSpec): Promise<WorkflowPhaseOutcome | GraderPhaseOutcome> {
  let invoke: Awaited<ReturnType<typeof resolveImplementation>>;
  try {
    invoke = await resolveImplementation(spec.implementation, spec.kind, spec.cwd);
  } catch (error) {
    return setupFailure(error);
  }
  if (spec.kind === 'grader') {
    const outcome = await runGraderPhase(invoke, spec.input);
    if (outcome.ok) await writeFile(spec.rewardFile, JSON.stringify(outcome.rewards));
    return outcome;
  }
  const outcome = await runWorkflowPhase(invoke, spec.input);
  if (outcome.ok) await writeFile(spec.samplesFile, JSON.stringify(outcome.samples, null, 2));
  return outcome;
}

async function main(specFile: string): Promise<void> {
  const spec = JSON.parse(await readFile(specFile, 'utf8')) as TrialRunnerSpec;
  await bridgeModelEndpoint();
  const outcome = await runPhase(spec);
  await writeFile(spec.outcomeFile, JSON.stringify(outcome));
}

// The workflow may leave timers or sockets open, and its own process.exit() must fail the rollout rather than
// end the runner before it reports: so the runner exits through the original exit once the outcome is written.
const exit = process.exit.bind(process);
installFaultHandlers();
interceptProcessExit();
main(process.argv[2] ?? '').then(
  () => exit(0),
  (error: unknown) => {
    console.error('rollout-test trial runner failed:', error);
    exit(1);
  },
);
