/** Headers as a `Response` is made with them. */
export type ResponseHeaders = NonNullable<ResponseInit['headers']>;

/** An answer of the network, whose body is read once: whole ({@link text}) or as it arrives ({@link stream}). */
export interface Answer {
  readonly status: number;
  /** A 2xx status. */
  readonly ok: boolean;
  readonly statusText: string;
  /** The headers as a `Response` is made with them. */
  readonly headers: ResponseHeaders;
  /** The `content-type` header, '' without one. */
  readonly contentType: string;
  /** The whole body; rejects when the connection drops before its end. */
  text(): Promise<string>;
  /** The body as it arrives, or null when there is none. */
  stream(): ReadableStream<Uint8Array> | null;
  /** The answer as a `Response`, for an SDK's call that is passed through unrecorded. */
  response(): Response;
}

/** Sends one request; rejects only when no answer arrived (the connection failed, or the call was aborted). */
export type Transport = (url: string | URL | Request, init: RequestInit | undefined) => Promise<Answer>;

/** An answer already in a `Response` (from `fetch`, or replayed from the model cache). */
export function fromResponse(response: Response): Answer {
  return {
    status: response.status,
    ok: response.ok,
    statusText: response.statusText,
    headers: response.headers,
    contentType: response.headers.get('content-type') ?? '',
    text: () => response.text(),
    stream: () => response.body,
    response: () => response,
  };
}

/** A transport over any `fetch` (one the user passed to the SDK): its answers as they are. */
export function fetchTransport(send: typeof fetch): Transport {
  return async (url, init) => fromResponse(await send(url, init));
}

/** Where undici (Node's `fetch` included) keeps the global dispatcher that `setGlobalDispatcher` sets. */
export const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
