/** The readers of a `Response` body other than `text()` and `json()`, which go to a `Response` of the text. */
const OTHER_READERS = ['arrayBuffer', 'blob', 'bytes', 'formData'] as const;

/**
 * The `Response` an SDK gets for a whole body the recorder has read (and, for JSON, parsed): `text()` and `json()`
 * give what was read and parsed, instead of a second read of a stream and a second parse. It makes no stream until
 * one is asked for (`body`, `clone()`, the other readers), which then all go to a `Response` of the text: a stream
 * per call cost a worker about 6% of its time at 2,000 calls. Like any `Response`, its body is read once. Its
 * readers are its prototype's, so that an answer costs one object beside the `Response`, not a closure per reader.
 */
export class ReadResponse extends Response {
  readonly #text: string;
  readonly #json: unknown;
  readonly #init: ResponseInit;
  #whole: Response | undefined;
  #used = false;

  /** `json` is the parsed `text`, or undefined when the recorder could not parse it. */
  constructor(text: string, json: unknown, init: ResponseInit) {
    super(null, init);
    this.#text = text;
    this.#json = json;
    this.#init = init;
  }

  #full(): Response {
    this.#whole ??= new Response(this.#text, this.#init);
    return this.#whole;
  }

  #unread(): void {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
  }

  /** The text, marking the body read; undefined when a stream of it was made, which then holds the body. */
  #take(): string | undefined {
    this.#unread();
    if (this.#whole) return undefined;
    this.#used = true;
    return this.#text;
  }

  static {
    // TypeScript declares the members of `Response` as properties, which a class may not override as methods or
    // accessors: they are set on the prototype here.
    const members: ThisType<ReadResponse> & Record<string, unknown> = {
      async text() {
        return this.#take() ?? this.#full().text();
      },
      async json() {
        const text = this.#take();
        if (text === undefined) return this.#full().json();
        // No value when the recorder could not parse it: the SDK gets the error the text gives.
        return this.#json === undefined ? JSON.parse(text) : this.#json;
      },
      clone() {
        if (this.#used) throw new TypeError('Response.clone: Body has already been consumed.');
        return this.#full().clone();
      },
      get body() {
        return this.#used ? null : this.#full().body;
      },
      get bodyUsed() {
        return this.#used || (this.#whole?.bodyUsed ?? false);
      },
    };
    for (const reader of OTHER_READERS) {
      members[reader] = async function (this: ReadResponse) {
        this.#unread();
        return (this.#full() as unknown as Record<string, () => Promise<unknown>>)[reader]!();
      };
    }
    Object.defineProperties(ReadResponse.prototype, Object.getOwnPropertyDescriptors(members));
  }
}
