import { HttpError } from '../../runtime/errors.ts';
import { ModelCacheMissError, ModelConnectionError, raisedByRecorder, rootMessage } from './errors.ts';
import type { CacheEntry } from './model-cache.ts';
import { type ParsedCompletion, parseCompletion } from './parse.ts';
import { type AttemptsFailed, withConnectionRetries } from './retry.ts';
import { redactUrlCredentials } from '../../runtime/redact.ts';
import type { ChatRequest } from './recorded-call.ts';
import type { CallRecorder } from './recorder.ts';
import { type Answer, fromResponse } from './transport.ts';

const EXCERPT = 80;

function lastUserMessage(request: ChatRequest): string {
  const message = (request.messages as Array<{ role?: unknown; content?: unknown }>).findLast((m) => m.role === 'user');
  const text = typeof message?.content === 'string' ? message.content : JSON.stringify(message?.content ?? '');
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text;
}

/** The OpenAI-style `error.message` of an error body, else the body itself. */
function errorMessageOf(body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: the raw body says it best
  }
  return body.slice(0, 500) || '(empty body)';
}

/**
 * One chat completions call: answered by the network or the cache, recorded when its body is complete. Outside a
 * rollout there is no recorder: nothing is recorded or cached, but errors are raised alike.
 */
export class ModelCall {
  readonly ordinal: number;
  readonly #started = performance.now();
  #replayedLatencyMs: number | undefined;

  constructor(
    readonly request: ChatRequest,
    readonly url: string,
    readonly recorder: CallRecorder | undefined,
  ) {
    this.ordinal = recorder?.nextOrdinal() ?? 0;
  }

  get #cache() {
    return this.recorder?.rollout.modelCache;
  }

  get #rolloutId(): string {
    return this.recorder?.rollout.rolloutId ?? '';
  }

  get #describe(): string {
    const where = this.recorder ? `model call #${this.ordinal} of rollout "${this.#rolloutId}"` : 'model call';
    return `${where} (model ${String(this.request.model)}, last user message "${lastUserMessage(this.request)}")`;
  }

  /**
   * Sends the request, again when it fails before any answer (see {@link withConnectionRetries}), or in replay
   * mode answers from the store and never touches the network.
   */
  async send(fromNetwork: () => Promise<Answer>, signal?: AbortSignal | null): Promise<Answer> {
    const cache = this.#cache;
    if (cache?.mode === 'replay') return this.#replay(cache.dir);
    try {
      return await withConnectionRetries(fromNetwork, signal);
    } catch (failed) {
      const { last, attempts } = failed as AttemptsFailed;
      this.#record({ error: `connection failed: ${rootMessage(last)}` });
      const tries = attempts > 1 ? ` (${attempts} attempts)` : '';
      const message = `${this.#describe}: cannot reach the model endpoint ${this.url}${tries}: ${rootMessage(last)}`;
      throw raisedByRecorder(new ModelConnectionError(redactUrlCredentials(message), { cause: last }));
    }
  }

  async #replay(dir: string): Promise<Answer> {
    const { cacheKey, readCacheEntry } = await import('./model-cache.ts');
    const key = cacheKey(this.request, this.#rolloutId, this.ordinal);
    const entry = await readCacheEntry(dir, key);
    if (!entry) {
      throw raisedByRecorder(new ModelCacheMissError(`model cache replay miss: ${this.#describe} has no entry ${key} in ${dir}; record it with --model-cache record`));
    }
    this.#replayedLatencyMs = entry.latencyMs;
    return fromResponse(new Response(entry.response.body, { status: entry.response.status, headers: { 'content-type': entry.response.contentType } }));
  }

  /** Reads an error answer whole and records it; the body is returned for the SDK or an {@link HttpError}. */
  async readError(answer: Answer): Promise<string> {
    const body = await answer.text();
    this.complete(answer, body);
    return body;
  }

  /** The error an HTTP error answer becomes, with the status first in its message. */
  httpError(status: number, body: string): HttpError {
    return raisedByRecorder(new HttpError(`model endpoint answered HTTP ${status}: ${errorMessageOf(body)} (${this.#describe})`, status));
  }

  /** The body was streamed through to the SDK and dropped before its end. */
  interrupted(error: unknown): ModelConnectionError {
    this.#record({ error: `answer interrupted: ${rootMessage(error)}` });
    const message = `${this.#describe}: the model endpoint dropped the connection while answering: ${rootMessage(error)}`;
    return raisedByRecorder(new ModelConnectionError(message, { cause: error }));
  }

  /**
   * Records the whole answer, and stores it in record mode. Returns the parsed JSON of a successful whole body, for
   * the SDK to use as is.
   */
  complete(answer: Answer, body: string): unknown {
    const { contentType } = answer;
    // Measured once: the stored latency must equal the recorded one for replayed samples to match.
    const latencyMs = this.#latencyMs();
    let json: unknown;
    try {
      if (answer.ok) {
        const parsed = parseCompletion(body, contentType);
        json = parsed.json;
        this.#record({ completion: parsed.completion }, latencyMs);
      } else {
        this.#record({ error: `HTTP ${answer.status}: ${errorMessageOf(body)}` }, latencyMs);
      }
    } catch (error) {
      this.#record({ error: `unreadable answer: ${rootMessage(error)}` }, latencyMs);
    }
    const cache = this.#cache;
    if (cache?.mode === 'record') {
      this.recorder?.track(this.#store(cache.dir, { status: answer.status, contentType, body }, latencyMs));
    }
    return json;
  }

  #latencyMs(): number {
    return this.#replayedLatencyMs ?? Math.round(performance.now() - this.#started);
  }

  #record(outcome: { completion?: ParsedCompletion; error?: string }, latencyMs = this.#latencyMs()): void {
    const error = outcome.error === undefined ? {} : { error: redactUrlCredentials(outcome.error) };
    this.recorder?.add({ ordinal: this.ordinal, request: this.request, latencyMs, ...outcome, ...error });
  }

  async #store(dir: string, response: CacheEntry['response'], latencyMs: number): Promise<void> {
    const { cacheKey, writeCacheEntry } = await import('./model-cache.ts');
    const call = { rolloutId: this.#rolloutId, ordinal: this.ordinal, model: String(this.request.model), lastUserMessage: lastUserMessage(this.request) };
    await writeCacheEntry(dir, { key: cacheKey(this.request, this.#rolloutId, this.ordinal), call, response, latencyMs });
  }
}
