import OpenAI, { type APIError, type ClientOptions } from 'openai';
import { APIPromise } from 'openai/core/api-promise';
import { currentRolloutScope, getRolloutContext, outsideRolloutScope, type RolloutContext } from '../../runtime/rollout-context.ts';
import { createRecordingFetch, recordingOptionsOf, resolveEndpoint, unwrapRecorderError } from '../recording/index.ts';
import { rolloutView } from './rollout-view.ts';

/** Options of {@link createRecordingClient}: the openai client's own, plus where to record. */
export interface RecordingClientOptions extends Omit<ClientOptions, 'baseURL'> {
  /** A base URL (`.../v1`) or the full chat completions URL; the rollout's endpoint by default. */
  baseURL?: string;
  /** The rollout to record into; the current one (found through {@link getRolloutContext}) by default. */
  rollout?: RolloutContext;
  /** The sample source name; `openai` by default. */
  source?: string;
  /** Fields merged into every chat completions request, e.g. `{ return_token_ids: true }` for vLLM. */
  extraBody?: Record<string, unknown>;
}

type RequestOptions = Parameters<OpenAI['request']>[0];
/** The parts of an APIPromise that its typings hide but its constructor takes. */
interface APIPromiseParts<T> {
  responsePromise: ConstructorParameters<typeof APIPromise<T>>[1];
  parseResponse: ConstructorParameters<typeof APIPromise<T>>[2];
}

/**
 * The official OpenAI client, bound to the current rollout: it talks to the rollout's endpoint with its key,
 * records every chat completions call (streamed or not) as the rollout's `openai` sample source, honours the
 * model cache, and does not retry unless told to (`maxRetries`), so that failures show. HTTP error answers throw
 * openai's `APIError` subclasses with their `status` (category HTTP_ERROR); an unreachable endpoint a
 * `ModelConnectionError` (AGENT_ERROR).
 *
 * Made inside `run()` it belongs to that rollout; made once at module scope (before any rollout) it sends each
 * call to the endpoint of the rollout making it, and records it there.
 */
export class RecordingOpenAI extends OpenAI {
  constructor(options: RecordingClientOptions = {}) {
    // openai's withOptions() makes a client of this class with the old one's options, its recording fetch among them.
    const inherited = recordingOptionsOf(options.fetch);
    const { rollout = inherited?.rollout ?? getRolloutContext(), source = inherited?.source ?? 'openai', extraBody = inherited?.extraBody, fetch, baseURL: url, apiKey: key, ...rest } = options;
    const endpoint = resolveEndpoint(rollout, { baseURL: url, apiKey: typeof key === 'string' ? key : undefined });
    super({
      maxRetries: 0,
      ...rest,
      baseURL: endpoint.baseURL,
      apiKey: typeof key === 'function' ? key : endpoint.apiKey,
      fetch: createRecordingFetch({ rollout, source, fetch, extraBody, httpErrors: 'return' }),
    });
  }

  /**
   * HTTP error answers stay openai's own errors (`RateLimitError`, ...), whose message starts with the status. They
   * are all named "Error"; the runtime categorizes by name (errors cross threads), so they are named `APIError`.
   */
  protected override makeStatusError(...args: Parameters<OpenAI['makeStatusError']>): APIError {
    const error = super.makeStatusError(...args);
    error.name = 'APIError';
    return error;
  }

  /**
   * openai wraps whatever its fetch throws into a generic "Connection error."; the recording fetch's own errors
   * (unreachable endpoint, cache miss) are unwrapped here so that they keep their message.
   */
  override request<Rsp>(options: RequestOptions, remainingRetries?: number | null): APIPromise<Rsp> {
    const inner = super.request<Rsp>(options, remainingRetries) as unknown as APIPromiseParts<Rsp>;
    const unwrapped = inner.responsePromise.catch((error: unknown) => {
      throw unwrapRecorderError(error);
    });
    return new APIPromise<Rsp>(this, unwrapped, inner.parseResponse);
  }
}

/**
 * Clients shared by this thread's rollouts, by endpoint and key: a client of the openai SDK builds ~100 objects,
 * which cost a model-call rollout more CPU than its recording (~90 µs in a thread's first 2,000 rollouts). Made
 * outside any rollout, each records a call into the rollout it runs in: see {@link rolloutView}.
 */
const sharedClients = new Map<string, RecordingOpenAI>();
/** Endpoints a thread talks to are few; past this many, the shared clients are made anew. */
const MAX_SHARED_CLIENTS = 16;

function sharedClient(rollout: RolloutContext): RecordingOpenAI {
  const { baseURL, apiKey } = resolveEndpoint(rollout, {});
  const key = `${baseURL}\0${apiKey}`;
  let client = sharedClients.get(key);
  if (!client) {
    if (sharedClients.size >= MAX_SHARED_CLIENTS) sharedClients.clear();
    client = outsideRolloutScope(() => new RecordingOpenAI({ baseURL, apiKey }));
    sharedClients.set(key, client);
  }
  return client;
}

/**
 * Makes a {@link RecordingOpenAI} client for the current rollout. Without options, inside a rollout, it is a view
 * of a client its thread's rollouts share: it records into this rollout wherever it is used from, as a client of
 * its own would, and refuses writes to its properties (pass options for a client of its own).
 *
 * @example
 * ```ts
 * class Agent extends AgentWorkflow {
 *   async run(ctx: AgentWorkflowContext) {
 *     const client = createRecordingClient();
 *     await client.chat.completions.create({ model: 'my-model', messages: ctx.prompt });
 *     // nothing to return: the calls are the rollout's sample
 *   }
 * }
 * ```
 */
export function createRecordingClient(options: RecordingClientOptions = {}): RecordingOpenAI {
  const scope = currentRolloutScope();
  const hasOptions = Object.values(options).some((value) => value !== undefined);
  if (!scope || hasOptions) return new RecordingOpenAI(options);
  return rolloutView(sharedClient(scope.context), scope);
}
