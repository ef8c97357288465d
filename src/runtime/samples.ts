import { z } from 'zod';
import type { Message } from '../model/message.ts';
import { type RolloutSample, RolloutSampleSchema } from '../model/sample.ts';
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

/** Checks samples against the schema; NaN and Infinity anywhere are rejected here, before any report. */
export function validateSamples(samples: unknown[]): RolloutSample[] {
  return samples.map((sample, index) => {
    const parsed = RolloutSampleSchema.safeParse(sample);
    if (parsed.success) return parsed.data;
    const source = (sample as { source?: unknown } | null)?.source ?? `#${index}`;
    throw new ValidationError(`sample from source "${String(source)}" is invalid:\n${z.prettifyError(parsed.error)}`);
  });
}

/** A workflow's return value becomes its sample; without one, the samples come from the registered sources. */
export async function samplesOf(result: WorkflowResult, rollout: RolloutContext): Promise<RolloutSample[]> {
  if (Array.isArray(result)) return validateSamples([sampleFromOutput({ messages: result as Message[] })]);
  if (isWorkflowOutput(result)) return validateSamples([sampleFromOutput(result)]);
  if (result !== undefined && result !== null) {
    throw new ValidationError(
      `workflow returned ${typeof result}; return messages, {messages, metrics?}, or nothing (samples then come from registered sources)`,
    );
  }
  return validateSamples(await rollout.collectSamples());
}
