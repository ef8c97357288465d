import path from 'node:path';
import { compareSides } from '../baseline/compare-sides.ts';
import { resolveSide } from '../baseline/comparison-side.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { UsageError } from '../errors.ts';
import { comparePage } from '../reporters/compare/compare-page.ts';
import { compareJson, compareTable } from '../reporters/compare/compare-table.ts';
import type { Terminal } from '../reporters/terminal.ts';
import { writeReport } from '../reporters/write-report.ts';

/**
 * `rollout-test compare A B`: B compared with A (A the older run or the baseline), suite by suite, on the
 * terminal, as JSON or as an HTML page. Exit 1 with `--fail-on-regression` when a suite regressed.
 */
export function compareCommand(a: string | undefined, b: string | undefined, config: ResolvedConfig, terminal: Terminal, failOnRegression: boolean): number {
  if (!a || !b) throw new UsageError('compare needs two runs or baselines, A (the older) and B, e.g. compare previous latest');
  const comparison = compareSides(resolveSide(a, config), resolveSide(b, config));
  for (const { name, outputFile } of config.reporters) {
    if (name === 'json') writeReport([compareJson(comparison)], outputFile, terminal);
    else if (name === 'html') {
      // As with `report`: `--outputFile f` names the page when html is the only document.
      const given = typeof config.outputFile === 'string' ? config.outputFile : config.outputFile?.html;
      const file = given === undefined ? path.join(config.outputDir, 'compare.html') : path.resolve(config.root, given);
      writeReport([comparePage(comparison)], file, terminal);
      terminal.write(`HTML comparison: ${file}\n`);
    } else if (name === 'default' || name === 'verbose' || name === 'github-actions') terminal.write(compareTable(comparison, terminal));
    else throw new UsageError(`compare writes the default, json and html reports, not ${name}`);
  }
  return failOnRegression && comparison.suites.some((s) => s.verdict === 'regressed') ? 1 : 0;
}
