import type { Answer } from './completion.ts';
import { splitPieces } from './tokenizer.ts';

type Delta = Record<string, unknown>;

/**
 * The `chat.completion.chunk`s of an answer: a role chunk, a chunk per content piece, per tool call a header
 * chunk and a chunk per argument piece, the finish chunk, and the usage chunk when asked for.
 */
export function streamChunks(answer: Answer, includeUsage: boolean): object[] {
  const chunk = (delta: Delta, extra: object = {}, finishReason: string | null = null) => ({
    ...answer.header('chat.completion.chunk'),
    choices: [{ index: 0, delta, finish_reason: finishReason, ...extra }],
  });
  const chunks: object[] = [{ ...chunk({ role: 'assistant', content: '' }), ...answer.promptTokenIds }];
  for (const piece of answer.contentPieces) {
    chunks.push(chunk({ content: piece }, { ...answer.logprobs([piece]), ...answer.tokenIds([piece]) }));
  }
  answer.toolCalls.forEach((call, index) => {
    const header = { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } };
    chunks.push(chunk({ tool_calls: [header] }, answer.tokenIds(splitPieces(call.function.name))));
    for (const piece of splitPieces(call.function.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, answer.tokenIds([piece])));
    }
  });
  chunks.push(chunk({}, {}, answer.finishReason));
  if (includeUsage) chunks.push({ ...answer.header('chat.completion.chunk'), choices: [], usage: answer.usage });
  return chunks;
}
