/**
 * The samples a recorder builds are handed to the runtime as they are (no cycle walk, no copy), while any other
 * sample is still checked and copied; the recorded calls share nothing with the answers the agent got.
 */
import { describe, expect, it } from 'vitest';
import { buildSamples } from '../../src/integrations/recording/sample.ts';
import { parseCompletion } from '../../src/integrations/recording/parse.ts';
import { ownSample, validateSamples } from '../../src/runtime/samples.ts';

const completionBody = {
  model: 'm',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }] },
      finish_reason: 'tool_calls',
      logprobs: { content: [{ token: 'a', logprob: -0.5, top_logprobs: [{ token: 'a', logprob: -0.5 }] }] },
    },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } },
};

function recordedSample() {
  const { completion, json } = parseCompletion(JSON.stringify(completionBody), 'application/json');
  const request = JSON.parse(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
  return { json: json as typeof completionBody, samples: buildSamples('openai', [{ ordinal: 0, request, latencyMs: 1, completion }]) };
}

describe('samples a recorder built', () => {
  it('reach the runtime as they are, and still pass the sample check', async () => {
    const { samples } = recordedSample();
    const [checked] = await validateSamples(samples);
    expect(checked).toBe(samples[0]);
    expect(checked!.metrics).toMatchObject({ model_calls: 1, prompt_tokens: 3, cached_tokens: 2 });
  });

  it('share nothing with the answer the SDK handed the agent', () => {
    const { json, samples } = recordedSample();
    const choice = json.choices[0]!;
    choice.message.tool_calls[0]!.function.name = 'edited';
    choice.logprobs.content[0]!.token = 'edited';
    choice.logprobs.content[0]!.top_logprobs[0]!.logprob = 0;
    Object.assign(json.usage.prompt_tokens_details, { cached_tokens: 99 });
    const [step] = samples[0]!.trajectoryMessages!;
    expect(step).toMatchObject({
      response: { tool_calls: [{ function: { name: 'add' } }] },
      logprobs: [{ token: 'a', top_logprobs: [{ logprob: -0.5 }] }],
      usage: { prompt_tokens_details: { cached_tokens: 2 } },
    });
  });
});

describe('any other sample', () => {
  it('is copied, so that code keeping it cannot change it after the phase', async () => {
    const sample = { source: 'mine', messages: [{ role: 'user', content: 'hi' }], metrics: {}, extraFields: {} };
    const [checked] = await validateSamples([sample]);
    expect(checked).toEqual(sample);
    expect(checked).not.toBe(sample);
  });

  it('is still walked for a cycle', async () => {
    const extraFields: Record<string, unknown> = {};
    extraFields.self = extraFields;
    expect(() => validateSamples([{ source: 'mine', messages: [], metrics: {}, extraFields }])).toThrow(/extraFields\.self refers back to itself/);
  });

  it('is checked without a promise when no sample needs the schema (a promise costs the thread its async hooks)', () => {
    const { samples } = recordedSample();
    const plain = { source: 'mine', messages: [{ role: 'user', content: 'hi' }], metrics: {}, extraFields: {} };
    const checked = validateSamples([...samples, plain]);
    expect(Array.isArray(checked)).toBe(true);
    expect(checked).toEqual([samples[0], plain]);
  });

  it('marked by its maker is still checked against the schema', async () => {
    const sample = ownSample({ source: 'mine', messages: [{ role: 'robot', content: 'hi' }], metrics: {}, extraFields: {} });
    await expect(validateSamples([sample])).rejects.toThrow(/invalid/);
  });
});
