import { formatDuration } from '../format.ts';
import { own } from '../printable.ts';
import type { Terminal } from '../terminal.ts';

const REDRAW_MS = 100;
/** Back to column 0, and erase the line. */
const ERASE_LINE = own('\r') + own('\x1b[2K');
/** Without a terminal (CI, a pipe) a long run prints its progress this often, so that it never looks hung. */
export const HEARTBEAT_MS = 10_000;

/**
 * The live line of an interactive run: done/total, rollouts per second, ETA. Redrawn at most ten times a
 * second, however fast rollouts finish, and erased before anything else is printed. Without a terminal, a
 * plain line of the same figures every 10 s instead.
 */
export class ProgressLine {
  #done = 0;
  #total = 0;
  #started = performance.now();
  #timer: NodeJS.Timeout | undefined;
  #shown = false;
  /** Shown after the counts: who runs the rollouts (the workers of a queue). */
  status = '';

  constructor(private readonly terminal: Terminal) {}

  start(total: number): void {
    this.#total = total;
    this.#started = performance.now();
    this.#timer = this.terminal.interactive ? setInterval(() => this.#draw(), REDRAW_MS) : setInterval(() => this.#beat(), HEARTBEAT_MS);
    this.#timer.unref();
  }

  tick(): void {
    this.#done++;
  }

  /** Removes the line so that other output starts at column 0; it comes back at the next redraw. */
  clear(): void {
    if (this.#shown) this.terminal.write(ERASE_LINE);
    this.#shown = false;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.clear();
  }

  text(): string {
    const seconds = (performance.now() - this.#started) / 1000;
    const rate = seconds > 0 ? this.#done / seconds : 0;
    const remaining = Math.max(0, this.#total - this.#done);
    const eta = rate > 0 && remaining > 0 ? ` · ETA ${formatDuration((remaining / rate) * 1000)}` : '';
    const status = this.status ? ` · ${this.status}` : '';
    return `${this.#done}/${this.#total} rollouts · ${rate.toFixed(1)}/s${eta}${status}`;
  }

  #beat(): void {
    this.terminal.write(`${this.terminal.colors.dim('…')} ${this.text()}\n`);
  }

  #draw(): void {
    const { colors } = this.terminal;
    this.terminal.write(`${ERASE_LINE}${colors.cyan('❯')} ${colors.dim(this.text())}`);
    this.#shown = true;
  }
}
