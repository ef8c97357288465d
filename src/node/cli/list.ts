import type { ResolvedConfig } from '../config/resolve-config.ts';
import { relative } from '../reporters/format.ts';
import type { Terminal } from '../reporters/terminal.ts';
import { verdictOptions } from '../run/finish-run.ts';
import { discover } from '../run/runner.ts';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `rollout-test list`: each suite with its rows and rollouts, nothing run. Exit 1 if a file fails to load or nothing matched. */
export async function listSuites(config: ResolvedConfig, terminal: Terminal): Promise<number> {
  const { files, counts, nothingMatched } = await discover(config);
  const { colors } = terminal;
  if (nothingMatched) {
    terminal.write(`${colors.yellow(`No rollouts: ${nothingMatched}`)}\n`);
    return verdictOptions(config).passWithNoRollouts ? 0 : 1;
  }
  let failed = false;
  for (const { file, suites, loadError } of files) {
    const where = relative(config.root, file);
    if (loadError) {
      failed = true;
      terminal.write(`${colors.red('✗')} ${where} ${colors.red(`failed to load: ${loadError.message.split('\n')[0]}`)}\n`);
    }
    for (const suite of suites) {
      const count = counts.get(`${file}\0${suite.name}`);
      const figures = count instanceof Error || !count ? colors.red(`dataset error: ${count?.message ?? 'unknown'}`) : `${plural(count.rows, 'row')}, ${plural(count.rollouts, 'rollout')}`;
      terminal.write(`${suite.name} ${colors.dim(`(${where})`)} ${figures}\n`);
    }
  }
  return failed ? 1 : 0;
}
