import type { HttpError } from '../../runtime/errors.ts';
import { getRolloutContext, type RolloutContext } from '../../runtime/rollout-context.ts';
import { toCurrentEndpoint } from './endpoint.ts';
import { ModelCall } from './model-call.ts';
import type { ChatRequest } from './recorded-call.ts';
import { recorderFor } from './recorder.ts';
import { poolTransport } from './pool-transport.ts';
import { type Answer, fetchTransport } from './transport.ts';

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
  /** The fetch that reaches the network; by default this thread's pool of kept-alive connections (`transport.ts`). */
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
 * other answer is read whole first (one read, one parse). The call is recorded when the body ends, and a
 * connection dropped mid-answer becomes a clear error.
 */
function observeBody(answer: Answer, call: ModelCall): Response | Promise<Response> {
  const body = answer.contentType.startsWith('text/event-stream') ? answer.stream() : undefined;
  return body ? passThrough(answer, body, call) : readWhole(answer, call);
}

/**
 * Loaded with the first whole answer: a class that extends `Response` reads the global at load, which makes Node
 * load its fetch implementation (~15 ms), and `rollout-test` loads this module for every rollout file.
 */
let readResponseModule: Promise<typeof import('./read-response.ts')> | undefined;

async function readWhole(answer: Answer, call: ModelCall): Promise<Response> {
  const { ReadResponse } = await (readResponseModule ??= import('./read-response.ts'));
  let text: string;
  try {
    text = await answer.text();
  } catch (error) {
    throw call.interrupted(error);
  }
  return new ReadResponse(text, call.complete(answer, text), { status: answer.status, statusText: answer.statusText, headers: answer.headers });
}

function passThrough(answer: Answer, stream: ReadableStream<Uint8Array>, call: ModelCall): Response {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          call.complete(answer, text + decoder.decode());
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
  return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
}

/**
 * A `fetch` for an SDK's client that records every chat completions call into the rollout (as sample source
 * `source`), serves or stores it through the rollout's model cache, and raises categorized errors: an HTTP error
 * answer is an {@link HttpError} with its status (see `httpErrors`), an unreachable or dropped endpoint a
 * `ModelConnectionError`.
 */
export function createRecordingFetch(options: RecordingFetchOptions): typeof fetch {
  // A recording fetch given as the network's (openai's withOptions() passes its client's on) would record each call twice.
  const inner = recordingOptionsOf(options.fetch);
  const network = inner ? inner.fetch : options.fetch;
  const send = network ? fetchTransport(network) : poolTransport;
  const { extraBody } = options;
  const recording: typeof fetch = async (input, init) => {
    // A client made outside any rollout (at module scope) records into the rollout that makes the call.
    const rollout = options.rollout ?? getRolloutContext();
    const original = input instanceof Request ? input.url : String(input);
    const aimed = toCurrentEndpoint(original, init, rollout);
    const target = aimed.url === original ? input : aimed.url;
    const parsed = chatRequestOf(target, aimed.init);
    if (!parsed) return (await send(target, aimed.init)).response();
    const request = { ...parsed, ...extraBody };
    const requestInit = extraBody ? { ...aimed.init, body: JSON.stringify(request) } : aimed.init;
    const call = new ModelCall(request, aimed.url, rollout && recorderFor(rollout, options.source));
    const answer = await call.send(() => send(target, requestInit), requestInit?.signal);
    if (answer.ok) return observeBody(answer, call);
    const body = await call.readError(answer);
    if (options.httpErrors !== 'return') throw call.httpError(answer.status, body);
    return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  };
  madeWith.set(recording, { ...options, fetch: network });
  return recording;
}

/** The options of each recording fetch, its network fetch unwrapped (see recordingOptionsOf). */
const madeWith = new WeakMap<typeof fetch, RecordingFetchOptions>();

/** What `fetch` records with, when it is a recording fetch: a client derived from its client records the same way. */
export function recordingOptionsOf(fetch: typeof globalThis.fetch | undefined): RecordingFetchOptions | undefined {
  return fetch && madeWith.get(fetch);
}
