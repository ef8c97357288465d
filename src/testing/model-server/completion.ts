import { logprobOf, promptTokenIds, splitPieces, tokenId } from './tokenizer.ts';
import type { ChatMessage, ScriptReply } from './types.ts';

/** What the request asked for beyond the answer itself. */
export interface AnswerOptions {
  model: string;
  messages: ChatMessage[];
  /** `top_logprobs` when `logprobs: true`, else undefined. */
  topLogprobs: number | undefined;
  /** vLLM's `return_token_ids`. */
  returnTokenIds: boolean;
}

type ToolCall = NonNullable<ChatMessage['tool_calls']>[number];

/** One answer, ready to be sent whole or as a stream of chunks. */
export class Answer {
  readonly id: string;
  readonly content: string | null;
  readonly toolCalls: ToolCall[];
  readonly promptIds: number[];

  constructor(
    private readonly reply: ScriptReply,
    readonly options: AnswerOptions,
  ) {
    const turn = options.messages.length;
    this.id = `chatcmpl-scripted-${turn}`;
    this.content = reply.content ?? (reply.toolCalls?.length ? null : '');
    this.toolCalls = (reply.toolCalls ?? []).map((call, i) => ({
      id: `call_${turn}_${i}`,
      type: 'function',
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      },
    }));
    this.promptIds = promptTokenIds(options.messages);
  }

  get finishReason(): 'tool_calls' | 'stop' {
    return this.toolCalls.length > 0 ? 'tool_calls' : 'stop';
  }

  get contentPieces(): string[] {
    return splitPieces(this.content ?? '');
  }

  /** Pieces of the tool calls, counted as completion tokens like the content. */
  toolPieces(call: ToolCall): string[] {
    return [...splitPieces(call.function.name), ...splitPieces(call.function.arguments)];
  }

  get completionIds(): number[] {
    return [...this.contentPieces, ...this.toolCalls.flatMap((c) => this.toolPieces(c))].map(tokenId);
  }

  get usage() {
    const completion = this.completionIds.length;
    const cached = this.reply.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: this.reply.cachedTokens } };
    return { prompt_tokens: this.promptIds.length, completion_tokens: completion, total_tokens: this.promptIds.length + completion, ...cached };
  }

  get message() {
    return { role: 'assistant', content: this.content, ...(this.toolCalls.length ? { tool_calls: this.toolCalls } : {}) };
  }

  logprobs(pieces: string[]) {
    const top = this.options.topLogprobs;
    return top === undefined ? {} : { logprobs: { content: pieces.map((p) => logprobOf(p, top)) } };
  }

  tokenIds(pieces: string[]) {
    return this.options.returnTokenIds ? { token_ids: pieces.map(tokenId) } : {};
  }

  get promptTokenIds() {
    return this.options.returnTokenIds ? { prompt_token_ids: this.promptIds } : {};
  }

  /** The non-streaming `chat.completion` body. */
  completion() {
    const choice = {
      index: 0,
      message: this.message,
      finish_reason: this.finishReason,
      logprobs: null,
      ...this.logprobs(this.contentPieces),
      ...(this.options.returnTokenIds ? { token_ids: this.completionIds } : {}),
    };
    return { ...this.header('chat.completion'), choices: [choice], usage: this.usage, ...this.promptTokenIds };
  }

  header(object: string) {
    return { id: this.id, object, created: 0, model: this.options.model };
  }
}
