import { type RolloutOutcome, scoredReward } from './outcomes.ts';

/** Stored runs of a suite the history of its rows covers, unless `--last` says otherwise. */
export const DEFAULT_HISTORY_RUNS = 10;

/** How often a row's outcome changed over its recent rollouts. */
export interface RowFlakiness {
  /** Rollouts in the row's history. */
  runs: number;
  passes: number;
  /** Adjacent changes between pass and fail. */
  flips: number;
  /** `flips / (runs - 1)`; 0 with fewer than two rollouts. */
  flipRate: number;
}

/** The flakiness of one row's sequence of outcomes (true: passed), in the order they ran. */
export function flakinessOf(outcomes: readonly boolean[]): RowFlakiness {
  let flips = 0;
  for (let i = 1; i < outcomes.length; i++) if (outcomes[i] !== outcomes[i - 1]) flips++;
  const runs = outcomes.length;
  return { runs, passes: outcomes.filter(Boolean).length, flips, flipRate: runs > 1 ? flips / (runs - 1) : 0 };
}

/** One stored run of a suite: the hashes of its inputs, and each row's hash and outcomes in run-index order. */
export interface SuiteRunOutcomes {
  code: string;
  config: string;
  rows: ReadonlyMap<number, { hash: string; outcomes: readonly boolean[] }>;
}

/**
 * Each row's history over a suite's runs, built from the newest run back, one run at a time (see
 * {@link rowHistories}): a caller reading stored runs holds one of them at once, not all.
 */
export class RowHistoryFold {
  readonly histories = new Map<number, boolean[]>();
  readonly #rowHash = new Map<number, string>();
  readonly #ended = new Set<number>();
  #open = true;

  constructor(
    readonly code: string,
    readonly config: string,
  ) {}

  /** Whether an older run may still add to the histories: no run's code or config differed yet. */
  get open(): boolean {
    return this.#open;
  }

  /** Adds the next older run; false once the suite's history ended (this run's code or config differ), when it adds nothing. */
  addOlder(run: SuiteRunOutcomes): boolean {
    if (!this.#open || run.code !== this.code || run.config !== this.config) return (this.#open = false);
    for (const [row, { hash, outcomes }] of run.rows) {
      if (this.#ended.has(row)) continue;
      if ((this.#rowHash.get(row) ?? hash) !== hash) {
        this.#ended.add(row);
        continue;
      }
      this.#rowHash.set(row, hash);
      this.histories.set(row, [...outcomes, ...(this.histories.get(row) ?? [])]);
    }
    return true;
  }
}

/**
 * Each row's history over a suite's stored runs (oldest first): the newest run's code and config start the
 * suite's history at the first older run that differs from them, and a row's hash starts the row's at the first
 * older run where the row differed. A run without the row neither adds to its history nor ends it.
 */
export function rowHistories(runs: readonly SuiteRunOutcomes[]): Map<number, boolean[]> {
  const newest = runs.at(-1);
  // Stryker disable next-line ConditionalExpression: without runs the loop below does nothing and returns the same empty map
  if (!newest) return new Map();
  const fold = new RowHistoryFold(newest.code, newest.config);
  for (let i = runs.length - 1; i >= 0 && fold.addOlder(runs[i]!); i--);
  return fold.histories;
}

/** Outcomes as text, `P` for a pass and `F` otherwise: as reports show a row's history, and stored runs keep it. */
export const outcomesText = (outcomes: readonly boolean[]): string => outcomes.map((passed) => (passed ? 'P' : 'F')).join('');

/** The outcomes of {@link outcomesText}. */
export const outcomesOfText = (text: string): boolean[] => [...text].map((c) => c === 'P');

/** A row's flakiness with its history, as reports show it. */
export interface FlakyRow extends RowFlakiness {
  row: number;
  /** The outcomes in order, `P` for a pass and `F` otherwise. */
  history: string;
}

/** Every row with a history, flakiest first: by flip rate, then flips, then row. */
export function flakyRows(runs: readonly SuiteRunOutcomes[]): FlakyRow[] {
  return flakyRowsOf(rowHistories(runs));
}

/** {@link flakyRows} of rows' histories. */
export function flakyRowsOf(histories: ReadonlyMap<number, readonly boolean[]>): FlakyRow[] {
  const rows = [...histories].map(([row, outcomes]) => ({
    row,
    ...flakinessOf(outcomes),
    history: outcomesText(outcomes),
  }));
  return rows.sort((a, b) => b.flipRate - a.flipRate || b.flips - a.flips || a.row - b.row);
}

/**
 * Each row's pass (true) or fail (false) outcomes in run-index order, from what the statistics see of a suite's
 * records (row keys unprefixed: the rows' indexes). Rollouts that say nothing about the agent are left out: skipped,
 * ungraded, and infrastructure failures (see `scoredReward`).
 */
export function rowOutcomes(outcomes: Iterable<RolloutOutcome>): Map<number, boolean[]> {
  const byRow = new Map<number, { run: number; passed: boolean }[]>();
  for (const outcome of outcomes) {
    if (scoredReward(outcome) === null) continue;
    const row = Number(outcome.rowKey);
    if (!Number.isInteger(row)) throw new RangeError(`rowOutcomes needs unprefixed row keys (row indexes), not "${outcome.rowKey}"`);
    const runs = byRow.get(row) ?? [];
    runs.push({ run: outcome.run, passed: outcome.status === 'passed' });
    byRow.set(row, runs);
  }
  return new Map([...byRow].map(([row, runs]) => [row, runs.sort((a, b) => a.run - b.run).map((r) => r.passed)]));
}
