import type { Answer } from './transport.ts';

const READERS = ['text', 'json', 'arrayBuffer', 'blob', 'bytes', 'formData'] as const;
type Reader = (typeof READERS)[number];

/**
 * The `Response` an SDK gets for a whole body the recorder has read (and, for JSON, parsed): `text()` and `json()`
 * give what was read and parsed, instead of a second read of a stream and a second parse. It makes no stream until
 * one is asked for (`body`, `clone()`, the other readers), which then all go to a `Response` of the text: a stream
 * per call cost a worker about 6% of its time at 2,000 calls. Like any `Response`, its body is read once.
 */
export function readResponse(text: string, json: unknown, answer: Answer): Response {
  const init = { status: answer.status, statusText: answer.statusText, headers: answer.headers };
  let whole: Response | undefined;
  let used = false;
  const full = () => (whole ??= new Response(text, init));
  const read = (reader: Reader) => async () => {
    if (used) throw new TypeError('Body is unusable: Body has already been read');
    if (whole || (reader !== 'text' && reader !== 'json')) return (full() as unknown as Record<Reader, () => Promise<unknown>>)[reader]();
    used = true;
    if (reader === 'text') return text;
    // No value when the recorder could not parse it: the SDK gets the error the text gives.
    return json === undefined ? JSON.parse(text) : json;
  };
  const descriptors: PropertyDescriptorMap = {
    body: { get: () => (used ? null : full().body) },
    bodyUsed: { get: () => used || (whole?.bodyUsed ?? false) },
    clone: {
      value: () => {
        if (used) throw new TypeError('Response.clone: Body has already been consumed.');
        return full().clone();
      },
    },
  };
  for (const reader of READERS) descriptors[reader] = { value: read(reader) };
  return Object.defineProperties(new Response(null, init), descriptors);
}
