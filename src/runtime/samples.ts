import type { Message } from '../model/message.ts';
import type { RolloutSample } from '../model/sample.ts';
import { isPlainValidSample } from '../model/sample-check.ts';
import { ValidationError } from './errors.ts';
import type { RolloutContext } from './rollout-context.ts';
import type { WorkflowOutput, WorkflowResult } from './workflow.ts';

function sampleFromOutput(output: WorkflowOutput): RolloutSample {
  const sample: RolloutSample = {
    source: 'workflow',
    messages: output.messages,
    metrics: output.metrics ?? {},
    extraFields: output.extraFields ?? {},
  };
  if (output.trajectoryMessages) sample.trajectoryMessages = output.trajectoryMessages;
  return sample;
}

function isWorkflowOutput(value: unknown): value is WorkflowOutput {
  return typeof value === 'object' && value !== null && Array.isArray((value as WorkflowOutput).messages);
}

/**
 * The path of a value that contains itself, or undefined: JSON (reports, journal, samples file) cannot hold one.
 * The keys walked are kept on a stack and joined only for a cycle found: every sample is walked, few have one.
 */
function cyclePath(value: object, keys: string[] = [], ancestors = new Set<object>()): string | undefined {
  if (ancestors.has(value)) return keys.join('.') || '(top level)';
  ancestors.add(value);
  for (const key in value) {
    const child: unknown = (value as Record<string, unknown>)[key];
    // Only objects can close a cycle: the numbers of token ids and logprobs are skipped without a key.
    if (typeof child !== 'object' || child === null || !Object.hasOwn(value, key)) continue;
    keys.push(key);
    const found = cyclePath(child, keys, ancestors);
    keys.pop();
    if (found) return found;
  }
  ancestors.delete(value);
  return undefined;
}

/** Samples that rollout-test's recorders built from parsed JSON and share with no other code (see {@link ownSample}). */
const ownSamples = new WeakSet<object>();

/**
 * Marks a sample its maker built from values `JSON.parse` gave and keeps from any other code: it has no cycle, and
 * no code can change it after the phase, so {@link validateSamples} neither walks it for one nor copies it.
 */
export function ownSample<T extends object>(sample: T): T {
  ownSamples.add(sample);
  return sample;
}

/**
 * Checks samples against the schema; NaN, Infinity, cycles and values JSON cannot hold are rejected here, at
 * validation, before any report: what passes can be written everywhere. The common sample is checked without the
 * schema (see `isPlainValidSample`), so that a worker thread loads zod only for a sample that needs it, and
 * without a promise (each costs the thread's async hooks, see `rollout-context.ts`): only samples that need the
 * schema make the result a promise. A sample with a cycle throws.
 */
export function validateSamples(samples: unknown[]): RolloutSample[] | Promise<RolloutSample[]> {
  const checked: Array<RolloutSample | Promise<RolloutSample>> = [];
  let pending = false;
  for (let index = 0; index < samples.length; index++) {
    const sample = samples[index];
    const source = () => String((sample as { source?: unknown } | null)?.source ?? `#${index}`);
    const own = typeof sample === 'object' && sample !== null && ownSamples.has(sample);
    const cycle = typeof sample === 'object' && sample !== null && !own ? cyclePath(sample) : undefined;
    if (cycle) throw new ValidationError(`sample from source "${source()}" cannot be stored as JSON: ${cycle} refers back to itself (a cycle)`);
    // A copy, as the schema returns: code that keeps the sample cannot change it after the phase.
    if (isPlainValidSample(sample)) checked.push(own ? (sample as RolloutSample) : structuredClone(sample as RolloutSample));
    else {
      pending = true;
      checked.push(import('./sample-schema.ts').then((schema) => schema.validateWithSchema(sample, source())));
    }
  }
  return pending ? Promise.all(checked) : (checked as RolloutSample[]);
}

/**
 * A workflow's return value becomes its sample; without one, the samples come from the registered sources. Without
 * either, no samples, at once: no promise to make (each costs the thread's async hooks, see `rollout-context.ts`).
 */
export function samplesOf(result: WorkflowResult, rollout: RolloutContext): RolloutSample[] | Promise<RolloutSample[]> {
  if (Array.isArray(result)) return validateSamples([sampleFromOutput({ messages: result as Message[] })]);
  if (isWorkflowOutput(result)) return validateSamples([sampleFromOutput(result)]);
  if (result !== undefined && result !== null) {
    throw new ValidationError(
      `workflow returned ${typeof result}; return messages, {messages, metrics?}, or nothing (samples then come from registered sources)`,
    );
  }
  if (!rollout.hasSampleSources) return [];
  return rollout.collectSamples().then(validateSamples);
}
