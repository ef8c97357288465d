import type { RolloutRecord } from '../types/rollout-record.ts';
import { outcomesOf, type RolloutOutcome } from '../stats/outcomes.ts';
import { outcomesOfText, RowHistoryFold, rowOutcomes, type SuiteRunOutcomes } from '../stats/flakiness.ts';
import { readJournal } from './journal-reader.ts';
import { listRuns } from './run-history.ts';
import { readRunInputs, type SuiteInputs } from './run-inputs.ts';

/** A suite as one run ran it: its inputs and its rows' outcomes. */
export interface SuiteRun {
  inputs: SuiteInputs;
  outcomes: SuiteRunOutcomes;
}

/**
 * A suite's run for the history: each row's hash beside its outcomes (rows without a hash never became a request).
 * `outcomes`: what the statistics see of its records (`SuiteRecords.outcomes()`, held in memory, where iterating the
 * records would read them back from the journal).
 */
export function suiteRunOutcomes(inputs: SuiteInputs, outcomes: Iterable<RolloutOutcome>): SuiteRunOutcomes {
  return withHashes(inputs, rowOutcomes(outcomes));
}

function withHashes(inputs: SuiteInputs, byRow: Iterable<[number, boolean[]]>): SuiteRunOutcomes {
  const rows = new Map<number, { hash: string; outcomes: boolean[] }>();
  for (const [row, outcomes] of byRow) {
    const hash = inputs.rows[row];
    if (hash !== undefined) rows.set(row, { hash, outcomes });
  }
  return { code: inputs.code, config: inputs.config, rows };
}

/**
 * A stored suite's outcomes: from its inputs, or, for a run stored before they held them, from the records of the
 * run's journal (`records`, read once per run and only then: a journal of 100,000 rollouts is most of a second).
 */
function storedOutcomes(inputs: SuiteInputs, records: () => RolloutRecord[]): SuiteRunOutcomes {
  if (inputs.outcomes) return withHashes(inputs, Object.entries(inputs.outcomes).map(([row, text]) => [Number(row), outcomesOfText(text)]));
  return suiteRunOutcomes(inputs, outcomesOf(records().filter((r) => r.id.startsWith(`${inputs.key}.`))));
}

/** A suite's row histories over its runs, and its inputs as its newest run had them. */
export interface SuiteHistory {
  inputs: SuiteInputs;
  histories: Map<number, boolean[]>;
}

/**
 * Each suite's row histories (see rowHistories) over its last `last` runs, by suite key: the `newest` runs given
 * (the run still going, whose records are in memory), then the stored runs from the newest back, `skip` left out.
 * Runs without the suite do not count. Stored runs are read one at a time, each folded in and dropped, and a
 * suite whose history ended reads no older run: memory holds the histories, not the runs.
 */
export function suiteHistories(outputDir: string, last: number, newest: SuiteRun[] = [], skip?: string): Map<string, SuiteHistory> {
  const suites = new Map<string, { inputs: SuiteInputs; fold: RowHistoryFold; runs: number }>();
  /** Whether a run of the suite `key` still counts: its history is open, and holds fewer than `last` runs. */
  const wanted = (key: string) => {
    const suite = suites.get(key);
    return !suite || (suite.fold.open && suite.runs < last);
  };
  const add = ({ inputs, outcomes }: SuiteRun) => {
    let suite = suites.get(inputs.key);
    if (!suite) suites.set(inputs.key, (suite = { inputs, fold: new RowHistoryFold(outcomes.code, outcomes.config), runs: 0 }));
    suite.fold.addOlder(outcomes);
    suite.runs++;
  };
  for (const run of newest) if (wanted(run.inputs.key)) add(run);
  for (const runDir of listRuns(outputDir).filter((dir) => dir !== skip).reverse()) {
    let records: RolloutRecord[] | undefined;
    const journal = () => (records ??= [...readJournal(runDir).rollouts.values()]);
    for (const inputs of readRunInputs(runDir)) {
      if (wanted(inputs.key)) add({ inputs, outcomes: storedOutcomes(inputs, journal) });
    }
  }
  return new Map([...suites].map(([key, { inputs, fold }]) => [key, { inputs, histories: fold.histories }]));
}
