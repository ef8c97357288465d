import {
  ADAPTIVE_METHOD,
  type AdaptiveState,
  adaptiveResult,
  firstRound,
  nextRound,
  recordRound,
  type RunOrder,
  type RunResult,
  scheduleRound,
  startAdaptive,
} from '../stats/adaptive-sampling.ts';
import { outcomesOf, scoredReward } from '../stats/outcomes.ts';
import type { SuiteStatistics } from '../stats/summary.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { PlannedRollout } from './plan-suite.ts';
import { requestId } from './request-id.ts';

type PlannedRequest = Extract<PlannedRollout, { kind: 'request' }>;

const BUDGET_STOP = 'no further runs: the budget was reached';

/**
 * The rounds of an adaptive suite (`--target-width`): after the suite's own runs (round 0), each round's runs are
 * planned from the results of the rounds before (see stats/adaptive-sampling.ts), and handed out like any other
 * rollout, so that they run wherever the suite's runs do (worker pool, Harbor trials, the queue's workers).
 */
export class AdaptiveRounds {
  /** The first rollout planned for each row: extra runs repeat it with another run index. */
  readonly #rows = new Map<number, PlannedRequest>();
  /** Request id → its row, bet and centre; results of this round. */
  readonly #orders = new Map<string, Omit<RunResult, 'reward'>>();
  #results: RunResult[] = [];
  #round0: RolloutRecord[] = [];
  #state: AdaptiveState | undefined;
  /** Why no further runs were added, when it was not the width or the cap; the interval still holds. */
  #stopped: string | undefined;
  /** Why the suite's rewards cannot take the sequence (a reward outside [0, 1]): its ordinary interval stays. */
  #invalid: string | undefined;
  /** Rollouts that ran (not skipped, e.g. by the budget). */
  #ran = 0;

  constructor(
    private readonly settings: { targetWidth: number; maxRuns: number; initialRuns: number },
    private readonly idPrefix: string,
  ) {}

  /** The budget kept the suite from its next round: it is partial, as when the budget skips planned rollouts. */
  get stoppedByBudget(): boolean {
    return this.#stopped === BUDGET_STOP;
  }

  /** Hears a rollout of round 0 as it is planned. */
  planned(planned: PlannedRollout): void {
    if (planned.kind === 'request' && !this.#rows.has(planned.key.row)) this.#rows.set(planned.key.row, planned);
  }

  /** Hears every record of the suite. */
  recorded(record: RolloutRecord): void {
    if (record.status !== 'skipped') this.#ran++;
    const order = this.#orders.get(record.id);
    if (!this.#state) this.#round0.push(record);
    else if (order) this.#results.push({ ...order, reward: rewardOf(record) });
  }

  /**
   * The rollouts of the next round, none when the suite stops: the width is reached, every row is at the cap, the
   * last round gave no reward (runs that all fail to run would go on to the cap), or `budgetReached`.
   */
  next(budgetReached = false): PlannedRequest[] {
    try {
      const orders = this.#state ? this.#afterRound() : this.#afterRoundZero();
      if (orders.length > 0 && budgetReached) this.#stopped = BUDGET_STOP;
      return this.#stopped || this.#invalid ? [] : this.#toRollouts(orders);
    } catch (error) {
      // A reward outside [0, 1]: the width W is on that scale, and the sequence needs the bound.
      this.#invalid = `no runs were added: ${(error as Error).message} (--target-width needs rewards in [0, 1])`;
      return [];
    }
  }

  /** Records a round's results; a round without a single reward stops the suite. */
  #record(results: RunResult[]): void {
    recordRound(this.#state!, results);
    if (!results.some((result) => result.reward !== null)) this.#stopped = 'no further runs: no rollout of the last round had a reward';
  }

  #afterRoundZero(): RunOrder[] {
    this.#state = startAdaptive(this.settings, [...this.#rows.keys()]);
    const orders = firstRound(this.#state);
    const byRow = new Map(orders.map((order) => [order.row, order]));
    scheduleRound(this.#state, orders);
    const results = this.#round0.flatMap((record) => {
      const order = byRow.get(record.row);
      return order && record.run <= order.runs ? [{ row: record.row, bet: order.bet, centre: order.centre, reward: rewardOf(record) }] : [];
    });
    this.#round0 = [];
    this.#record(results);
    return nextRound(this.#state);
  }

  #afterRound(): RunOrder[] {
    this.#record(this.#results);
    this.#results = [];
    return nextRound(this.#state!);
  }

  #toRollouts(orders: RunOrder[]): PlannedRequest[] {
    const state = this.#state!;
    const rollouts: PlannedRequest[] = [];
    for (const { row, runs, bet, centre } of orders) {
      const first = this.#rows.get(row)!;
      const before = state.scheduled.get(row)!;
      for (let run = before + 1; run <= before + runs; run++) {
        const id = requestId(this.idPrefix, row, run);
        this.#orders.set(id, { row, bet, centre });
        rollouts.push({ kind: 'request', key: { ...first.key, id, run }, request: { ...first.request, id } });
      }
    }
    scheduleRound(state, orders);
    return rollouts;
  }

  /** The suite's statistics with its adaptive interval and `adaptive`, once its rounds are over. */
  apply(stats: SuiteStatistics): SuiteStatistics {
    if (!this.#state) return stats;
    const rollouts = this.#ran;
    if (this.#invalid) return { ...stats, adaptive: { targetWidth: this.settings.targetWidth, reached: false, rollouts, stopped: this.#invalid } };
    const { mean, low, high, population, adaptive } = adaptiveResult(this.#state);
    const stopped = this.#stopped && !adaptive.reached ? { stopped: this.#stopped } : {};
    return { ...stats, meanReward: { mean, low, high, method: ADAPTIVE_METHOD, population }, adaptive: { ...adaptive, rollouts, ...stopped } };
  }
}

function rewardOf(record: RolloutRecord): number | null {
  return scoredReward(outcomesOf([record])[0]!);
}
