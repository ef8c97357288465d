import * as z from 'zod';
import { type OptionValues, option, parseOptions } from '../config/cli-options.ts';
import { DEFAULT_HISTORY_RUNS } from '../stats/flakiness.ts';

/** The options only `rollout-test flaky` takes (the shared ones select suites, the reporter and its file). */
export const FLAKY_OPTIONS = {
  last: option(
    '--last <n>',
    `flaky: stored runs of each suite to look back over (default ${DEFAULT_HISTORY_RUNS})`,
    () => z.coerce.number({ error: '--last must be a number' }).int('--last must be a whole number').positive('--last must be at least 1').default(DEFAULT_HISTORY_RUNS),
  ),
  all: option('--all', 'flaky: list every row with a history, not only those whose outcome flipped', () => z.boolean().default(false)),
};

export type FlakyOptions = OptionValues<typeof FLAKY_OPTIONS>;

export function parseFlakyOptions(raw: Record<string, unknown>): FlakyOptions {
  const { last, all } = raw;
  return parseOptions(FLAKY_OPTIONS, { last, all });
}
