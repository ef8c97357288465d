import { toRolloutError } from '../../runtime/errors.ts';
import type { RolloutError } from '../../model/result.ts';
import { loadSuites } from '../../runtime/suite-registry.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import { UsageError } from '../errors.ts';
import { describeIssues } from '../config/schema-errors.ts';
import { SuiteOptionsSchema, SuiteOptionsWithPlainRowsSchema, isPlainRows } from './suite-schema.ts';
import { backendEntry } from '../../backends/registry.ts';

/** A rollout file and the suites it declares, or why it could not be loaded. */
export interface CollectedFile {
  file: string;
  suites: RolloutSuite<any, any>[];
  loadError?: RolloutError;
}

/** Checks a suite's options as declared, so that a typo or a nonsensical number fails before anything runs. */
function checkSuite(suite: RolloutSuite<any, any>, file: string, requireDataset: boolean): void {
  const named = typeof suite?.name === 'string' && suite.name ? `suite "${suite.name}"` : 'a suite';
  // Inline rows are checked without the schema when they are what it takes (a schema pass per row is most of the cost).
  // Without zod's eval-based fast path: compiling it for a schema parsed once a suite cost a run's start-up ~3-5 ms.
  const parsed = (isPlainRows(suite?.dataset) ? SuiteOptionsWithPlainRowsSchema : SuiteOptionsSchema).safeParse(suite, { jitless: true });
  if (!parsed.success) throw new TypeError(`invalid defineRollout options of ${named} in ${file}: ${describeIssues(SuiteOptionsSchema, parsed.error).replaceAll('\n', '; ')}`);
  if (requireDataset && suite.dataset === undefined && !(suite.backend && backendEntry(suite.backend).rowsFromTask)) throw new TypeError(`${named} in ${file} has no dataset`);
}

/**
 * Two suites of one file with one name would share rollout ids (the id is the file and the name), and so
 * their journal entries and `--resume` results: a usage error, not a load error of the file.
 */
function checkUniqueNames(suites: RolloutSuite<any, any>[], file: string): void {
  const seen = new Set<string>();
  for (const { name } of suites) {
    if (seen.has(name)) throw new UsageError(`${file} declares two suites named "${name}": suite names must be unique within a file`);
    seen.add(name);
  }
}

/** Node loads a `.ts` file as CommonJS outside an ESM package; rollout files (and rollout-test) are ESM. */
function withHint(error: unknown, file: string): unknown {
  const code = (error as { code?: string } | null)?.code;
  if (code !== 'ERR_REQUIRE_CYCLE_MODULE' && code !== 'ERR_REQUIRE_ESM') return error;
  const hint = `${file} was loaded as CommonJS: rollout files are ES modules. Add "type": "module" to the nearest package.json, or name the file *.rollout.mts`;
  return Object.assign(new Error(hint, { cause: error }), { stack: `Error: ${hint}` });
}

/**
 * Imports each rollout file on the main thread; a file that fails to import is kept, with its error. A served
 * suite needs no dataset (`requireDataset: false`): the trainer sends the prompts.
 */
export async function collectSuites(files: string[], namePattern: RegExp | undefined, requireDataset = true): Promise<CollectedFile[]> {
  const collected: CollectedFile[] = [];
  for (const file of files) {
    try {
      const suites = await loadSuites(file);
      if (suites.length === 0) throw new TypeError(`${file} declares no suite: call defineRollout({...}) in it`);
      for (const suite of suites) checkSuite(suite, file, requireDataset);
      checkUniqueNames(suites, file);
      collected.push({ file, suites: suites.filter((suite) => !namePattern || namePattern.test(suite.name)) });
    } catch (error) {
      if (error instanceof UsageError) throw error;
      collected.push({ file, suites: [], loadError: toRolloutError(withHint(error, file), 'setup', 'AGENT_ERROR') });
    }
  }
  return collected;
}
