import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { outcomesText } from '../stats/flakiness.ts';

/**
 * The content hashes of what a suite ran with, stored with each run (`inputs.json` in its directory): the run
 * history compares them to tell a flaky row from a changed one.
 */
export interface SuiteInputs {
  /** The suite's key (see SuiteReport.key), its name and its rollout file. */
  key: string;
  name: string;
  file: string;
  /** The rollout file and every module it imports, the config file and the packages they use. */
  code: string;
  /** The suite's resolved settings that decide its outcomes (not how many runs, nor how many at once). */
  config: string;
  /** Each row's hash (its prompt, label and metadata), by its 1-based index. */
  rows: Record<number, string>;
  /**
   * Each row's outcomes in run-index order, `P` for a pass and `F` otherwise, by its index (see `rowOutcomes`): what
   * the run history reads instead of the run's journal. Absent in runs stored before it was.
   */
  outcomes?: Record<number, string>;
}

const FILE = 'inputs.json';

/** The inputs of a run's suites as its rollouts are planned, written to the run's directory when it ends. */
export class RunInputs {
  readonly #suites = new Map<string, Omit<SuiteInputs, 'rows'>>();
  readonly #rows = new Map<string, Record<number, string>>();
  readonly #outcomes = new Map<string, Record<number, string>>();

  /** A suite's code and config hashes; its rows come with {@link row}, in any order. */
  suite(inputs: Omit<SuiteInputs, 'rows'>): void {
    this.#suites.set(inputs.key, inputs);
  }

  /** A row's hash, computed once per row (its runs share it). */
  row(key: string, row: number, hash: () => string): void {
    let rows = this.#rows.get(key);
    if (!rows) this.#rows.set(key, (rows = {}));
    rows[row] ??= hash();
  }

  /** A suite's rows' outcomes as the run ended (see SuiteInputs.outcomes). */
  outcomes(key: string, rows: ReadonlyMap<number, { outcomes: readonly boolean[] }>): void {
    const byRow: Record<number, string> = {};
    for (const [row, { outcomes }] of rows) byRow[row] = outcomesText(outcomes);
    this.#outcomes.set(key, byRow);
  }

  get(key: string): SuiteInputs | undefined {
    const suite = this.#suites.get(key);
    const outcomes = this.#outcomes.get(key);
    return suite && { ...suite, rows: this.#rows.get(key) ?? {}, ...(outcomes && { outcomes }) };
  }

  write(runDir: string): void {
    const suites = [...this.#suites.keys()].map((key) => this.get(key));
    writeFileSync(path.join(runDir, FILE), `${JSON.stringify({ version: 1, suites })}\n`);
  }
}

/** A stored run's suite inputs; none for a run stored before they were, or whose file is unreadable. */
export function readRunInputs(runDir: string): SuiteInputs[] {
  const file = path.join(runDir, FILE);
  if (!existsSync(file)) return [];
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { suites?: unknown };
    return Array.isArray(parsed.suites) ? parsed.suites.filter(isSuiteInputs).map(withValidOutcomes) : [];
  } catch {
    return [];
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** A suite whose stored outcomes are not an object of strings of `P`s and `F`s (a damaged file) without them: its journal counts instead. */
function withValidOutcomes(suite: SuiteInputs): SuiteInputs {
  const { outcomes } = suite as { outcomes?: unknown };
  if (outcomes === undefined || (isRecord(outcomes) && Object.values(outcomes).every((text) => typeof text === 'string' && /^[PF]*$/.test(text)))) return suite;
  const { outcomes: _damaged, ...rest } = suite;
  return rest;
}

function isSuiteInputs(value: unknown): value is SuiteInputs {
  return isRecord(value) && ['key', 'name', 'file', 'code', 'config'].every((k) => typeof value[k] === 'string') && isRecord(value.rows);
}
