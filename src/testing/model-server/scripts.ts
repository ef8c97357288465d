import { textOf } from './tokenizer.ts';
import type { ChatMessage, ModelScript, ScriptReply, ScriptRequest } from './types.ts';

function lastUserIndex(messages: ChatMessage[]): number {
  return messages.findLastIndex((m) => m.role === 'user');
}

/** The text of the last user message, '' when there is none. */
export function lastUserText(messages: ChatMessage[]): string {
  return textOf(messages[lastUserIndex(messages)]?.content);
}

/** Answers `echo: <last user message>`. */
export const echoScript: ModelScript = ({ messages }) => ({ content: `echo: ${lastUserText(messages)}` });

const EXPRESSION = /\d+(?:\.\d+)?(?:\s*[-+*/]\s*\d+(?:\.\d+)?)+/g;

/**
 * A tool-using agent's model: for each arithmetic expression in the last user message, in order, one turn that
 * calls the `calculator` tool with `{expression}`; once every result is back, the answer `Results: a, b.`
 */
export const calculatorScript: ModelScript = ({ messages, tools }) => {
  const start = lastUserIndex(messages);
  const expressions = lastUserText(messages).match(EXPRESSION) ?? [];
  if (expressions.length === 0) return { content: 'There is nothing to calculate.' };
  if (!tools.some((t) => t.function.name === 'calculator')) return { content: 'I need a calculator tool.' };
  const results = messages.slice(start + 1).filter((m) => m.role === 'tool').map((m) => textOf(m.content));
  const next = expressions[results.length];
  if (next !== undefined) return { toolCalls: [{ name: 'calculator', arguments: { expression: next } }] };
  return { content: `Results: ${results.join(', ')}.` };
};

const DIRECTIVE = /\[(fail|drop|cut|latency)(?::(\d+))?(?:@(\d+))?\]/g;

/** The assistant turn about to be answered, counted from 1 after the last user message. */
function turnOf(messages: ChatMessage[]): number {
  return messages.slice(lastUserIndex(messages) + 1).filter((m) => m.role === 'assistant').length + 1;
}

function applyDirective(reply: ScriptReply, kind: string, value: number): ScriptReply {
  if (kind === 'latency') return { ...reply, latencyMs: value };
  return { ...reply, fail: kind === 'drop' || kind === 'cut' ? kind : { status: value || 500 } };
}

/**
 * Lets dataset rows inject faults: `[fail:429]`, `[fail:500@2]` (only on the 2nd assistant turn), `[drop]`
 * (close the connection without answering), `[cut]` (close it halfway through the answer), `[latency:200]` in the
 * last user message change the reply of `script`.
 */
export function withFaultDirectives(script: ModelScript): ModelScript {
  return async (request: ScriptRequest) => {
    let reply = await script(request);
    const turn = turnOf(request.messages);
    for (const [, kind = '', value, at] of lastUserText(request.messages).matchAll(DIRECTIVE)) {
      if (at === undefined || Number(at) === turn) reply = applyDirective(reply, kind, Number(value ?? 0));
    }
    return reply;
  };
}
