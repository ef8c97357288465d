import type { HttpError } from '../../runtime/errors.ts';
import { getRolloutContext, type RolloutContext } from '../../runtime/rollout-context.ts';
import { toCurrentEndpoint } from './endpoint.ts';
import { ModelCall } from './model-call.ts';
import { type ChatRequest, recorderFor } from './recorder.ts';

/** Options shared by every integration's recording transport. */
export interface RecordingFetchOptions {
  /**
   * The rollout to record into; by default the one making each call (found through the rollout context), so
   * that a client made once at module scope records into every rollout that uses it. Outside any rollout
   * nothing is recorded or cached.
   */
  rollout?: RolloutContext | undefined;
  /** The sample source name the calls are registered under. */
  source: string;
  /** The fetch that reaches the network; the global one by default. */
  fetch?: typeof fetch | undefined;
  /** Fields merged into every chat completions request, e.g. `{ return_token_ids: true }` for vLLM. */
  extraBody?: Record<string, unknown> | undefined;
  /**
   * `throw` (the default): an HTTP error answer throws an {@link HttpError} with the status and the call in its
   * message. `return`: it is handed to the SDK, for SDKs whose own errors categorize as HTTP_ERROR already.
   */
  httpErrors?: 'throw' | 'return' | undefined;
}

/** The JSON body of a `POST …/chat/completions`, or undefined for any other request (passed through as is). */
function chatRequestOf(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): ChatRequest | undefined {
  const url = input instanceof Request ? input.url : String(input);
  if (!/\/chat\/completions\/?(\?|$)/.test(url) || typeof init?.body !== 'string') return undefined;
  const body = JSON.parse(init.body) as ChatRequest;
  return Array.isArray(body.messages) ? body : undefined;
}

/**
 * An answer streamed as server-sent events is handed through to the SDK as it arrives, while a copy is kept; any
 * other answer is read whole first (one read, no second stream to pass it through). The call is recorded when the
 * body ends, and a connection dropped mid-answer becomes a clear error.
 */
function observeBody(response: Response, call: ModelCall): Response | Promise<Response> {
  if (!response.body) {
    call.complete(response, '');
    return response;
  }
  return response.headers.get('content-type')?.startsWith('text/event-stream') ? passThrough(response, call) : readWhole(response, call);
}

async function readWhole(response: Response, call: ModelCall): Promise<Response> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw call.interrupted(error);
  }
  call.complete(response, text);
  return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function passThrough(response: Response, call: ModelCall): Response {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          call.complete(response, text + decoder.decode());
          return controller.close();
        }
        text += decoder.decode(chunk.value, { stream: true });
        controller.enqueue(chunk.value);
      } catch (error) {
        controller.error(call.interrupted(error));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * A `fetch` for an SDK's client that records every chat completions call into the rollout (as sample source
 * `source`), serves or stores it through the rollout's model cache, and raises categorized errors: an HTTP error
 * answer is an {@link HttpError} with its status (see `httpErrors`), an unreachable or dropped endpoint a
 * `ModelConnectionError`.
 */
export function createRecordingFetch(options: RecordingFetchOptions): typeof fetch {
  const send = options.fetch ?? globalThis.fetch;
  const { extraBody } = options;
  return async (input, init) => {
    // A client made outside any rollout (at module scope) records into the rollout that makes the call.
    const rollout = options.rollout ?? getRolloutContext();
    const original = input instanceof Request ? input.url : String(input);
    const aimed = toCurrentEndpoint(original, init, rollout);
    const target = aimed.url === original ? input : aimed.url;
    const parsed = chatRequestOf(target, aimed.init);
    if (!parsed) return send(target, aimed.init);
    const request = { ...parsed, ...extraBody };
    const requestInit = extraBody ? { ...aimed.init, body: JSON.stringify(request) } : aimed.init;
    const call = new ModelCall(request, aimed.url, rollout && recorderFor(rollout, options.source));
    const response = await call.send(() => send(target, requestInit), requestInit?.signal);
    if (response.ok) return observeBody(response, call);
    const body = await call.readError(response);
    if (options.httpErrors !== 'return') throw call.httpError(response.status, body);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
