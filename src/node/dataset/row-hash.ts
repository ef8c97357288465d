import { hash } from 'node:crypto';
import type { ExecutionRequest } from '../../model/request.ts';

/** The dataset row a request was made from: its prompt, label and metadata (what a queue's jobs and the run history compare). */
export function rowHash(request: ExecutionRequest): string {
  return hash('sha256', JSON.stringify([request.prompt, request.label ?? null, request.metadata ?? null]), 'hex').slice(0, 16);
}
