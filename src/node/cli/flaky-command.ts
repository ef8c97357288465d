import type { ResolvedConfig } from '../config/resolve-config.ts';
import { matchesFileFilters } from '../discovery/find-rollout-files.ts';
import { suiteHistories } from '../output/row-history.ts';
import { formatNumber, relative } from '../reporters/format.ts';
import type { Terminal } from '../reporters/terminal.ts';
import { writeReport } from '../reporters/write-report.ts';
import type { FlakyOptions } from './flaky-options.ts';
import { type FlakyRow, flakyRowsOf } from '../stats/flakiness.ts';

/** A suite of the history with its rows to list. */
interface FlakySuite {
  name: string;
  file: string;
  rows: FlakyRow[];
}

/** The stored suites that the positional filters (substrings of the file) and `-t` select, with their rows' flakiness. */
function flakySuites(config: ResolvedConfig, { last, all }: FlakyOptions): FlakySuite[] {
  const suites: FlakySuite[] = [];
  for (const { inputs, histories } of suiteHistories(config.outputDir, last).values()) {
    const { name, file } = inputs;
    if (!matchesFileFilters(config.root, file, config.fileFilters) || (config.namePattern && !config.namePattern.test(name))) continue;
    const rows = flakyRowsOf(histories).filter((row) => all || row.flips > 0);
    if (rows.length) suites.push({ name, file: relative(config.root, file), rows });
  }
  return suites.sort((a, b) => a.name.localeCompare(b.name));
}

/** The rows as a table, flakiest first across the suites. */
function* text(suites: FlakySuite[], all: boolean): Generator<string> {
  const rows = suites.flatMap((suite) => suite.rows.map((row) => ({ suite, row })));
  if (rows.length === 0) {
    yield `No ${all ? 'row has a history' : 'row flipped between pass and fail'} in the stored runs.\n`;
    return;
  }
  rows.sort((a, b) => b.row.flipRate - a.row.flipRate || b.row.flips - a.row.flips);
  for (const { suite, row } of rows) {
    yield `${suite.name} (${suite.file}) row ${row.row}: ${row.flips} flips in ${row.runs} rollouts, ${row.passes} passed, flip rate ${formatNumber(row.flipRate)}  ${row.history}\n`;
  }
}

/**
 * `rollout-test flaky`: the rows whose outcome flipped between pass and fail over each suite's last stored runs
 * with unchanged inputs, flakiest first; JSON with `--reporter json` (to `--outputFile`, else stdout).
 */
export function flakyCommand(config: ResolvedConfig, options: FlakyOptions, terminal: Terminal): number {
  const suites = flakySuites(config, options);
  const json = config.reporters.find((r) => r.name === 'json');
  if (!json) {
    writeReport(text(suites, options.all), undefined, terminal);
    return 0;
  }
  const document = { suites: suites.map(({ name, file, rows }) => ({ name, file, rows: rows.map(({ row, runs, passes, flips, flipRate }) => ({ row, runs, passes, flips, flipRate })) })) };
  writeReport([`${JSON.stringify(document, null, 2)}\n`], json.outputFile, terminal);
  return 0;
}
