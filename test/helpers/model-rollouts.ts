/** Runs example agents against a scripted server through the real LocalBackend. */
import type { ExecutionRequest, ExecutionResult, RolloutSample } from '../../src/public/index.ts';
import { LocalBackend, type LocalBackendOptions } from '../../src/public/node.ts';

const AGENTS = new URL('../../rollouts/agents/', import.meta.url).pathname;

/** A `"module:export"` reference to an example agent, for the worker pool. */
export const agentRef = (file: string, name: string) => `${AGENTS}${file}:${name}`;

/** A dataset row as the CLI would make it: a system prompt, a user question, a label. */
export function row(id: string, question: string, label = ''): ExecutionRequest {
  const prompt = [
    { role: 'system' as const, content: 'Use the calculator tool for arithmetic.' },
    { role: 'user' as const, content: question },
  ];
  return { id, prompt, label, agentTimeoutSec: 30 };
}

/** Both results of one rollout: after the workflow, and the final one after grading. */
export interface RolloutOutcome {
  workflow: ExecutionResult;
  graded: ExecutionResult;
}

/** Runs requests on a fresh backend and closes it. */
export async function runRollouts(options: LocalBackendOptions<any, any>, requests: ExecutionRequest[]): Promise<RolloutOutcome[]> {
  const backend = new LocalBackend(options);
  try {
    return await Promise.all(
      requests.map(async (request) => {
        const outcome: Partial<RolloutOutcome> = {};
        await backend.execute(request, (r) => void (outcome.workflow = r), (r) => void (outcome.graded = r));
        return outcome as RolloutOutcome;
      }),
    );
  } finally {
    await backend.close();
  }
}

/** A sample without its measured latencies, to compare runs. */
export function withoutLatency(sample: RolloutSample | undefined): unknown {
  if (!sample) return sample;
  const { latency_ms: _, ...metrics } = sample.metrics;
  const steps = sample.trajectoryMessages?.map(({ latency_ms: __, ...step }) => step);
  return { ...sample, metrics, trajectoryMessages: steps };
}
