import type { ExecutionRequest, ExecutionResult } from '../../src/public/index.ts';
import type { ExecutionBackend } from '../../src/public/node.ts';

/** Both callbacks' results of one rollout, and how often each callback fired. */
export interface Recorded {
  workflow: ExecutionResult[];
  grader: ExecutionResult[];
}

/** Runs one request and records every callback call. */
export async function runOne(backend: ExecutionBackend, request: ExecutionRequest, signal?: AbortSignal): Promise<Recorded> {
  const recorded: Recorded = { workflow: [], grader: [] };
  await backend.execute(
    request,
    (r) => void recorded.workflow.push(r),
    (r) => void recorded.grader.push(r),
    signal ? { signal } : {},
  );
  return recorded;
}

export function request(id: string, extra: Partial<ExecutionRequest> = {}): ExecutionRequest {
  return { id, prompt: [{ role: 'user', content: `question ${id}` }], ...extra };
}

export const FIXTURES = new URL('../fixtures/workflows.ts', import.meta.url).pathname;
export const ref = (name: string) => `${FIXTURES}:${name}`;
