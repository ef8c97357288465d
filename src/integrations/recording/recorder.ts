import type { RolloutSample } from '../../model/sample.ts';
import type { RolloutContext } from '../../runtime/rollout-context.ts';
import type { RecordedCall } from './recorded-call.ts';
import { buildSamples } from './sample.ts';

/** The calls of one integration in one rollout; it is the rollout's sample source under its name. */
export class CallRecorder {
  readonly #calls: RecordedCall[] = [];
  readonly #pending = new Set<Promise<unknown>>();

  constructor(
    readonly rollout: RolloutContext,
    readonly source: string,
    /** Ordinals are counted per rollout across integrations, so that cache keys stay unique. */
    readonly nextOrdinal: () => number,
  ) {}

  add(call: RecordedCall): void {
    this.#calls.push(call);
  }

  /**
   * Keeps work that must finish before the samples are final (a cache entry being written), and before the
   * rollout is reported however it ends (the rollout context tracks it too).
   */
  track(work: Promise<unknown>): void {
    this.#pending.add(work);
    this.rollout.track(work);
    void work.finally(() => this.#pending.delete(work)).catch(() => undefined);
  }

  async collect(): Promise<RolloutSample[]> {
    await Promise.all(this.#pending);
    return buildSamples(this.source, this.#calls);
  }
}

const byRollout = new WeakMap<RolloutContext, { ordinals: number; recorders: Map<string, CallRecorder> }>();

/** The recorder of `source` in `rollout`, made and registered as a sample source on first use. */
export function recorderFor(rollout: RolloutContext, source: string): CallRecorder {
  let state = byRollout.get(rollout);
  if (!state) byRollout.set(rollout, (state = { ordinals: 0, recorders: new Map() }));
  const calls = state;
  let recorder = calls.recorders.get(source);
  if (!recorder) {
    recorder = new CallRecorder(rollout, source, () => calls.ordinals++);
    calls.recorders.set(source, recorder);
    rollout.registerSampleSource(source, recorder);
  }
  return recorder;
}
