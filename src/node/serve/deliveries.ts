import type { CallbackSender } from './callback-sender.ts';
import type { GraderCompleteBody, RolloutCompleteBody } from './protocol.ts';
import { type CallbackKind, keyOf } from './journal-replay.ts';
import type { ServeJournal } from './serve-journal.ts';

/** Where a rollout's callbacks go, and the bearer they carry (the controller's key, kept only in memory). */
export interface CallbackTarget {
  suite: string;
  id: string;
  completionUrl: string;
  graderUrl: string | null;
  bearer: string | null;
}

/** What a controller answered a delivered callback with: a JSON object (osmosis's `{"ok": true, "trajectory": …}`). */
export type OnAck = (target: CallbackTarget, kind: CallbackKind, ack: Record<string, unknown>) => void;

/**
 * Delivers the callbacks of every rollout: each body is journaled before it is sent, the grader callback of
 * a rollout goes out only after its completion callback has been settled, and a callback that could not be
 * delivered stays owed in the journal, for the next start to deliver. The controller's answer to a delivered
 * callback, when it is a JSON object, is handed to `onAck` as it came.
 */
export class Deliveries {
  readonly #chains = new Map<string, Promise<void>>();
  readonly #pending = new Set<Promise<void>>();

  constructor(
    private readonly journal: ServeJournal,
    private readonly sender: CallbackSender,
    private readonly log: (line: string) => void,
    private readonly onAck: OnAck,
  ) {}

  /** Journals `body` and sends it once the journal line is written and the rollout's earlier callback is settled. */
  send(target: CallbackTarget, kind: CallbackKind, body: RolloutCompleteBody | GraderCompleteBody): void {
    if (this.#urlOf(target, kind) === null) return;
    const payload = JSON.stringify(body);
    this.journal.owe(target.suite, target.id, kind, payload);
    this.resend(target, kind, payload);
  }

  /** Sends a body (JSON text) that the journal holds already, as an earlier server's owed callback. */
  resend(target: CallbackTarget, kind: CallbackKind, payload: string): void {
    const url = this.#urlOf(target, kind);
    if (url === null) return;
    const key = keyOf(target.suite, target.id);
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.#deliver(target, kind, url, payload));
    this.#chains.set(key, next);
    this.#pending.add(next);
    void next.finally(() => {
      this.#pending.delete(next);
      if (this.#chains.get(key) === next) this.#chains.delete(key);
    });
  }

  /** Whether callbacks of the rollout are still being delivered. */
  delivering(suite: string, id: string): boolean {
    return this.#chains.has(keyOf(suite, id));
  }

  /** Resolves when every callback handed over so far has been delivered, refused, or given up on. */
  async idle(): Promise<void> {
    while (this.#pending.size) await Promise.all(this.#pending);
  }

  #urlOf(target: CallbackTarget, kind: CallbackKind): string | null {
    return kind === 'completion' ? target.completionUrl : target.graderUrl;
  }

  async #deliver(target: CallbackTarget, kind: CallbackKind, url: string, payload: string): Promise<void> {
    await this.journal.flushed();
    const outcome = await this.sender.post(url, payload, target.bearer);
    if (outcome.kind === 'failed') {
      this.log(`${kind} callback of rollout ${target.id} not delivered (${outcome.reason}); it stays owed in the journal, a restart delivers it`);
      return;
    }
    if (outcome.kind === 'delivered' && outcome.ack) this.onAck(target, kind, outcome.ack);
    // Delivered all the same (the controller said yes); what its answer carried (osmosis's trajectory report) is not.
    if (outcome.kind === 'delivered' && outcome.lost) this.log(`${kind} callback of rollout ${target.id} delivered, but the controller's answer could not be read whole (${outcome.lost}): what it reports is missing`);
    if (outcome.kind === 'rejected') this.log(`${kind} callback of rollout ${target.id} refused by the controller with HTTP ${outcome.status}; not retried`);
    this.journal.settle(target.suite, target.id, kind);
  }
}
