import type { RunReport, SuiteReport } from '../../types/run-report.ts';

/** Rollouts per written piece: big enough to keep writes few, small enough to keep pieces small. */
const RECORDS_PER_CHUNK = 1000;

const field = (indent: string, key: string, value: unknown) => `${indent}${JSON.stringify(key)}: ${JSON.stringify(value)}`;

function* suiteJson(suite: SuiteReport): Generator<string> {
  const { records, ...meta } = suite;
  const head = Object.entries(meta).filter(([, value]) => value !== undefined);
  yield `    {\n${head.map(([key, value]) => field('      ', key, value)).join(',\n')},\n      "records": [`;
  let chunk: string[] = [];
  let written = 0;
  for (const record of records.json()) {
    chunk.push(`\n        ${record}`);
    if (chunk.length < RECORDS_PER_CHUNK) continue;
    yield (written ? ',' : '') + chunk.join(',');
    written += chunk.length;
    chunk = [];
  }
  if (chunk.length) yield (written ? ',' : '') + chunk.join(',');
  yield `${records.length ? '\n      ' : ''}]\n    }`;
}

/**
 * The `json` reporter's document: everything about the run, machine-readable (`version` names the shape), suites
 * last and one rollout per line, produced a piece at a time.
 */
export function* reportJson(report: RunReport): Generator<string> {
  const { suites, ...rest } = report;
  const head = Object.entries(rest).filter(([, value]) => value !== undefined);
  yield `{\n${head.map(([key, value]) => field('  ', key, value)).join(',\n')},\n  "suites": [\n`;
  for (const [index, suite] of suites.entries()) {
    if (index) yield ',\n';
    yield* suiteJson(suite);
  }
  yield '\n  ]\n}\n';
}
