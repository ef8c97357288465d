import type { ExecutionResult } from '../../model/result.ts';
import type { Message } from '../../model/message.ts';
import { userFrame } from '../stack/user-frame.ts';
import type { OutputExcerpt, RolloutDetails, TextExcerpt } from '../types/rollout-details.ts';

/** Enough for a diff of a short answer; long enough answers are read in the samples file. */
export const EXCERPT_CHARS = 2000;

export function excerpt(text: string | undefined): TextExcerpt | undefined {
  if (text === undefined) return undefined;
  return { text: text.length > EXCERPT_CHARS ? text.slice(0, EXCERPT_CHARS) : text, chars: text.length };
}

/** A message as text: its text content (parts, or an object as JSON), and its tool calls. */
function messageText(message: Message): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  const parts = (Array.isArray(content) ? content : content ? [content] : []).map((part) => (typeof part === 'object' && part && 'text' in part ? String(part.text) : JSON.stringify(part)));
  const calls = (message.tool_calls ?? []).map((call) => `${call.function.name}(${call.function.arguments})`);
  return [...parts, ...calls].join('\n');
}

function finalAnswer(result: ExecutionResult): string | undefined {
  for (const sample of [...result.samples].reverse()) {
    const answer = sample.messages.findLast((m) => m.role === 'assistant');
    if (answer) return messageText(answer);
  }
  return undefined;
}

function labelText(label: unknown): string | undefined {
  if (label === undefined || label === null) return undefined;
  return typeof label === 'string' ? label : JSON.stringify(label);
}

function isOutputExcerpt(value: unknown): value is OutputExcerpt {
  const { stream, text, lines } = (value ?? {}) as Partial<OutputExcerpt>;
  return (stream === 'stdout' || stream === 'stderr') && typeof text === 'string' && typeof lines === 'number';
}

/** The verifier output a backend put beside the result (Harbor does), only as far as it has the expected shape. */
function verifierOutput(result: ExecutionResult): OutputExcerpt[] | undefined {
  const output = result.extraFields.verifierOutput;
  if (!Array.isArray(output)) return undefined;
  return (output as unknown[]).filter(isOutputExcerpt).map(({ stream, text, lines }) => ({ stream, text: text.slice(-EXCERPT_CHARS), lines }));
}

/** The details of a rollout that did not pass; passed rollouts keep none (a run of 100,000 stays small). */
export function rolloutDetails(result: ExecutionResult, label: unknown): RolloutDetails {
  return { answer: excerpt(finalAnswer(result)), label: excerpt(labelText(label)), frame: userFrame(result.error?.stack), verifierOutput: verifierOutput(result) };
}
