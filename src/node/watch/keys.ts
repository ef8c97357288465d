import { createInterface, type Interface } from 'node:readline';

/** The key Ctrl-C sends on a terminal in raw mode (where it raises no SIGINT). */
export const CTRL_C = '\x03';

/**
 * Keys typed into the watcher. On a terminal, single keypresses (raw mode); otherwise one key per line, so
 * that a script or a test can drive watch mode through a pipe. {@link KeyInput.prompt} reads a line either way.
 */
export class KeyInput {
  #answer: ((line: string | undefined) => void) | undefined;
  #typed = '';
  readonly #lines: Interface | undefined;

  constructor(
    private readonly stdin: NodeJS.ReadStream,
    private readonly echo: (text: string) => void,
    private readonly onKey: (key: string) => void,
  ) {
    if (stdin.isTTY) {
      stdin.setRawMode(true);
      stdin.setEncoding('utf8');
      stdin.on('data', this.#onData);
    } else {
      this.#lines = createInterface({ input: stdin }).on('line', this.#onLine);
    }
  }

  /** Asks for a line; resolves with undefined when the user backs out (Escape or Ctrl-C on a terminal). */
  prompt(question: string): Promise<string | undefined> {
    this.echo(question);
    this.#typed = '';
    return new Promise((resolve) => (this.#answer = resolve));
  }

  #answerWith(line: string | undefined): void {
    const answer = this.#answer;
    this.#answer = undefined;
    answer?.(line);
  }

  #onLine = (line: string): void => {
    if (this.#answer) {
      this.#answerWith(line.trim());
      return;
    }
    const key = line.trim();
    if (key) this.onKey(key);
  };

  #onData = (chunk: string): void => {
    for (const char of chunk) {
      if (!this.#answer) this.onKey(char);
      else this.#edit(char);
    }
  };

  /** Minimal line editing while prompting on a terminal. */
  #edit(char: string): void {
    if (char === '\r' || char === '\n') {
      this.echo('\n');
      this.#answerWith(this.#typed.trim());
    } else if (char === CTRL_C || char === '\x1b') {
      this.echo('\n');
      this.#answerWith(undefined);
    } else if (char === '\x7f' || char === '\b') {
      if (this.#typed) this.echo('\b \b');
      this.#typed = this.#typed.slice(0, -1);
    } else {
      this.#typed += char;
      this.echo(char);
    }
  }

  /** Gives the terminal back and lets the process exit. */
  close(): void {
    if (this.stdin.isTTY) {
      this.stdin.off('data', this.#onData);
      this.stdin.setRawMode(false);
    }
    this.#lines?.close();
    this.stdin.pause();
    this.stdin.unref?.();
  }
}
