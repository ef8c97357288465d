import { type CompareOptions, compareSuites, type SuiteComparison } from '../stats/index.ts';
import type { ComparisonSource } from '../types/run-report.ts';
import type { ComparisonSide, SideSuite } from './baseline-store.ts';

/** One suite of a comparison as `compare --reporter json` writes it. */
export interface ComparedSuite extends SuiteComparison {
  name: string;
  key: string;
}

/** `rollout-test compare A B`: what each side was and the suites both have, compared. */
export interface RunComparison {
  a: ComparisonSource;
  b: ComparisonSource;
  suites: ComparedSuite[];
  /** Suites (by key) only one side has, so not compared. */
  onlyInA: string[];
  onlyInB: string[];
}

/**
 * The suites both sides have (by key, in B's order), compared with the one engine `--baseline` uses too:
 * B − A over each suite's paired rows, Holm across these suites.
 */
export function compareSuiteTables(a: ReadonlyMap<string, SideSuite>, b: ReadonlyMap<string, SideSuite>, options: CompareOptions = {}): ComparedSuite[] {
  const keys = [...b.keys()].filter((key) => a.has(key));
  const compared = compareSuites(keys.map((key) => ({ a: a.get(key)!.rows, b: b.get(key)!.rows })), options);
  return compared.map((comparison, i) => ({ name: b.get(keys[i]!)!.name, key: keys[i]!, ...comparison }));
}

export function compareSides(a: ComparisonSide, b: ComparisonSide): RunComparison {
  return {
    a: a.source,
    b: b.source,
    suites: compareSuiteTables(a.suites, b.suites),
    onlyInA: [...a.suites.keys()].filter((key) => !b.suites.has(key)),
    onlyInB: [...b.suites.keys()].filter((key) => !a.suites.has(key)),
  };
}
