import { addUsage, type TokenUsage } from '../cost/usage.ts';
import { LineReader } from './line-reader.ts';
import { LimitTally, type SuiteLimits } from './limit-tally.ts';
import type { RolloutOutcome } from '../stats/index.ts';
import type { RolloutRecord, RolloutStatus } from '../types/rollout-record.ts';

/** A file of lines that rollouts' records are written to, and how much of it is on disk. */
export interface RecordJournal {
  readonly file: string;
  /** Bytes of whole lines in the file: a line whose offset is below this can be read back. */
  readonly durableSize: number;
}

/** How the journal writes a rollout: its record's JSON behind a type field. */
export const ROLLOUT_LINE_PREFIX = '{"type":"rollout",';

const STATUSES: readonly RolloutStatus[] = ['passed', 'failed', 'errored', 'skipped', 'completed'];
const STATUS_MASK = 0b111;
const HAS_REWARD = 0b1000;
const PHASES = ['environmentSetupMs', 'agentMs', 'verifierMs'] as const;

/** A growable column of numbers: 4 or 8 bytes a rollout instead of an object each. */
class Column<T extends Int32Array | Float64Array | Uint8Array | Uint16Array> {
  values: T;
  constructor(private readonly make: (size: number) => T) {
    this.values = make(256);
  }
  set(index: number, value: number): void {
    if (index === this.values.length) {
      const grown = this.make(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[index] = value;
  }
}

/**
 * A suite's rollout records, as reports read them. A run writes each record to its journal and keeps here only
 * what the statistics need (row, run, reward, status, error category and phase: about 30 bytes a rollout) and
 * where the record's line is; reporters iterate the records, which reads them back from the journal. So a run
 * of 100,000 rollouts does not hold 100,000 records: iterate once per use and keep only what you need.
 *
 * A record stays in memory until its line is on disk (or for good, when the journal could not be written), so
 * iterating never misses one. Records given without a journal (merged shards, watch mode's last reports) are
 * kept in memory. `JSON.stringify` writes them as an array.
 */
export class SuiteRecords implements Iterable<RolloutRecord> {
  #length = 0;
  readonly #row = new Column((n) => new Int32Array(n));
  readonly #run = new Column((n) => new Int32Array(n));
  readonly #reward = new Column((n) => new Float64Array(n));
  readonly #flags = new Column((n) => new Uint8Array(n));
  /** Error category and phase, as indexes into `#names` (0: none). */
  readonly #category = new Column((n) => new Uint16Array(n));
  readonly #phase = new Column((n) => new Uint16Array(n));
  readonly #names: (string | undefined)[] = [undefined];
  readonly #nameIndex = new Map<string, number>();
  /** Byte offset of each record's journal line; -1 for a record kept in memory. */
  readonly #offset = new Column((n) => new Float64Array(n));
  /** Records without a journal line. */
  readonly #kept = new Map<number, RolloutRecord>();
  /**
   * Records whose journal line is not on disk yet, from `#firstUnwritten` on, and their indexes (increasing): two
   * arrays, not a map. A map that fills and empties every turn is rehashed every turn, and V8 links each replaced
   * table to its successor: one promoted table then kept every later one, and the records in them, alive through
   * every scavenge until the next full GC.
   */
  #unwritten: (RolloutRecord | undefined)[] = [];
  #unwrittenIndex: number[] = [];
  #firstUnwritten = 0;
  #usage: TokenUsage | undefined;
  readonly #phaseTotals = PHASES.map(() => ({ sum: 0, count: 0 }));
  readonly #limits = new LimitTally();

  constructor(private readonly journal?: RecordJournal) {}

  /** Records kept in memory, in the order given. */
  static of(records: Iterable<RolloutRecord>): SuiteRecords {
    const kept = new SuiteRecords();
    for (const record of records) kept.add(record);
    return kept;
  }

  get length(): number {
    return this.#length;
  }

  /**
   * Adds a record that ended; `offset` is where the journal writes its line, if it does.
   * @internal
   */
  add(record: RolloutRecord, offset?: number): void {
    const index = this.#length++;
    this.#row.set(index, record.row);
    this.#run.set(index, record.run);
    this.#reward.set(index, record.reward ?? 0);
    this.#flags.set(index, STATUSES.indexOf(record.status) | (record.reward === null ? 0 : HAS_REWARD));
    this.#category.set(index, this.#nameOf(record.error?.category));
    this.#phase.set(index, this.#nameOf(record.error?.phase));
    this.#offset.set(index, offset ?? -1);
    // Before this record joins them: in a steady run every line is on disk by the next turn, and the list empties.
    this.#releaseWritten();
    if (offset === undefined || !this.journal) this.#kept.set(index, record);
    else {
      this.#unwritten.push(record);
      this.#unwrittenIndex.push(index);
    }
    if (record.usage) for (const [model, counts] of Object.entries(record.usage)) addUsage((this.#usage ??= {}), model, counts);
    this.#limits.add(record.limits);
    for (let at = 0; at < PHASES.length; at++) {
      const value = record.timings[PHASES[at]!];
      if (typeof value === 'number') (this.#phaseTotals[at]!.sum += value), (this.#phaseTotals[at]!.count += 1);
    }
  }

  /** The records in the order they ended. */
  [Symbol.iterator](): Iterator<RolloutRecord> {
    return this.#read(undefined, (line) => parseRecord(line))[Symbol.iterator]();
  }

  /** The records by row, then run. */
  inRowOrder(): Iterable<RolloutRecord> {
    const row = this.#row.values;
    const run = this.#run.values;
    const order = this.#indexes().sort((a, b) => row[a]! - row[b]! || run[a]! - run[b]!);
    return this.#read(order, (line) => parseRecord(line));
  }

  /** The failed and errored records, in the order they ended: only those are read back. */
  failures(): Iterable<RolloutRecord> {
    const flags = this.#flags.values;
    const failing = this.#indexes().filter((i) => {
      const status = STATUSES[flags[i]! & STATUS_MASK];
      return status === 'failed' || status === 'errored';
    });
    return this.#read(failing, (line) => parseRecord(line));
  }

  /** Each record's JSON (`JSON.stringify(record)`), in the order they ended: the journal's text, not parsed. */
  json(): Iterable<string> {
    return this.#read(undefined, (line) => (line.startsWith(ROLLOUT_LINE_PREFIX) ? `{${line.slice(ROLLOUT_LINE_PREFIX.length)}` : JSON.stringify(parseRecord(line))), JSON.stringify);
  }

  /** What the statistics see of each record; `rowPrefix` qualifies the row keys (the whole run's rows are per suite). */
  outcomes(rowPrefix = ''): RolloutOutcome[] {
    const outcomes: RolloutOutcome[] = [];
    for (let i = 0; i < this.#length; i++) {
      const flags = this.#flags.values[i]!;
      outcomes.push({
        rowKey: `${rowPrefix}${this.#row.values[i]}`,
        run: this.#run.values[i]!,
        reward: flags & HAS_REWARD ? this.#reward.values[i]! : null,
        status: STATUSES[flags & STATUS_MASK]!,
        category: this.#names[this.#category.values[i]!],
        phase: this.#names[this.#phase.values[i]!] as RolloutOutcome['phase'],
      });
    }
    return outcomes;
  }

  /** Tokens the records' model calls used, by model, when any were recorded. */
  get usage(): TokenUsage | undefined {
    return this.#usage;
  }

  /** The limits the records ran under, with how many ran under each; undefined when none said. */
  limits(): SuiteLimits | undefined {
    return this.#limits.result();
  }

  /** Mean of each Harbor phase's duration (environment setup, agent, verifier) over the records that have it. */
  phaseMeans(): { environmentSetupMs?: number; agentMs?: number; verifierMs?: number } {
    return Object.fromEntries(PHASES.flatMap((phase, at) => {
      const { sum, count } = this.#phaseTotals[at]!;
      return count ? [[phase, sum / count]] : [];
    }));
  }

  /** The same records, kept in memory: for holding past the run, whose journal may be pruned. */
  inMemory(): SuiteRecords {
    return this.journal ? SuiteRecords.of(this) : this;
  }

  toJSON(): RolloutRecord[] {
    return [...this];
  }

  #indexes(): number[] {
    return Array.from({ length: this.#length }, (_, i) => i);
  }

  /**
   * Records at `indexes` (all, in the order they ended, when undefined): from memory when kept there, else their
   * journal line through `fromLine`.
   */
  *#read<T>(indexes: number[] | undefined, fromLine: (line: string) => T, fromRecord: (record: RolloutRecord) => T = (r) => r as T): Generator<T> {
    this.#releaseWritten();
    let reader: LineReader | undefined;
    try {
      const count = indexes ? indexes.length : this.#length;
      for (let at = 0; at < count; at++) {
        const index = indexes ? indexes[at]! : at;
        const record = this.#kept.get(index) ?? this.#unwrittenAt(index);
        if (record) {
          yield fromRecord(record);
          continue;
        }
        reader ??= new LineReader(this.journal!.file);
        yield fromLine(reader.lineAt(this.#offset.values[index]!));
      }
    } finally {
      reader?.close();
    }
  }

  /** Lets go of the records whose lines are on disk now. */
  #releaseWritten(): void {
    const indexes = this.#unwrittenIndex;
    const durable = this.journal?.durableSize ?? 0;
    let first = this.#firstUnwritten;
    for (; first < indexes.length && this.#offset.values[indexes[first]!]! < durable; first++) this.#unwritten[first] = undefined;
    if (first === indexes.length) {
      this.#unwritten = [];
      this.#unwrittenIndex = [];
      first = 0;
    }
    this.#firstUnwritten = first;
  }

  /** The unwritten record at `index`, if it is one: a binary search of the unwritten indexes. */
  #unwrittenAt(index: number): RolloutRecord | undefined {
    const indexes = this.#unwrittenIndex;
    let low = this.#firstUnwritten;
    let high = indexes.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = indexes[middle]!;
      if (at === index) return this.#unwritten[middle];
      if (at < index) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  #nameOf(name: string | undefined): number {
    if (name === undefined) return 0;
    let index = this.#nameIndex.get(name);
    if (index === undefined) {
      index = this.#names.push(name) - 1;
      this.#nameIndex.set(name, index);
    }
    return index;
  }
}

/** A record from its journal line (without the line's type field). */
function parseRecord(line: string): RolloutRecord {
  const { type: _, ...record } = JSON.parse(line) as RolloutRecord & { type?: string };
  return record;
}
