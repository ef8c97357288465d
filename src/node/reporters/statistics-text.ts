import type { IntervalMethod, SuiteStatistics, VarianceSplit } from '../stats/index.ts';
import { formatNumber } from './format.ts';
import { adaptiveText } from './adaptive-text.ts';

/** What each interval method is, in a few words, for the reports' notes. */
const METHOD_NAMES: Record<IntervalMethod, string> = {
  wilson: 'Wilson on all runs (0/1 rewards)',
  'wilson-stratified': 'Wilson on the within-row variance',
  'wilson-clustered': 'Wilson on the between-row variance (clustered by row)',
  't-stratified': 'Student t on the within-row variance (rewards outside [0, 1])',
  't-clustered': 'Student t on the between-row variance (rewards outside [0, 1])',
  'confidence-sequence-stratified': 'an anytime-valid confidence sequence, each row weighing the same (adaptive runs)',
};

/** A suite's name and statistics. */
interface NamedStatistics {
  name: string;
  stats: SuiteStatistics;
}

const range = ({ low, high }: { low: number | null; high: number | null }) => `[${formatNumber(low)}, ${formatNumber(high)}]`;

/** `0.900 [0.596, 0.982]`: the mean reward with its interval for the suite's own rows, or `n/a`. */
export function meanRewardText({ meanReward }: SuiteStatistics): string {
  if (meanReward.mean === null) return 'n/a';
  return meanReward.low === null ? formatNumber(meanReward.mean) : `${formatNumber(meanReward.mean)} ${range(meanReward)}`;
}

/** `[0.550, 0.990]`: the interval for rows like these; `n/a` with no reward, `–` with one row. */
export function populationText({ meanReward }: SuiteStatistics): string {
  if (meanReward.mean === null) return 'n/a';
  const population = meanReward.population;
  return population && population.low !== null ? range(population) : '–';
}

/** `@1 0.700 [0.55, 0.82]  @2 …`: pass@k with the interval for the suite's own rows. */
export function passAtKText(stats: SuiteStatistics, separator = '  '): string {
  const entries = Object.entries(stats.passAtK);
  if (!entries.length) return 'n/a';
  return entries.map(([k, value]) => {
    const interval = stats.passAtKInterval[k];
    return `@${k} ${formatNumber(value)}${interval ? ` ${range(interval)}` : ''}`;
  }).join(separator);
}

/** `13.7%`: a share as a percentage, to a tenth. */
const percent = (share: number) => `${Math.round(share * 1000) / 10}%`;

/**
 * `infrastructure errors: 4 of 10 rollouts (40%, 95% CI 13.7%–72.6%), kept apart from 2 agent errors`, or undefined
 * when no rollout failed for infrastructure.
 */
export function infrastructureText({ infrastructureErrorRate: rate }: SuiteStatistics): string | undefined {
  if (!rate.errors || rate.rate === null || !rate.interval95) return undefined;
  const [low, high] = rate.interval95;
  const agent = `${rate.agentErrors} agent error${rate.agentErrors === 1 ? '' : 's'}`;
  return `infrastructure errors: ${rate.errors} of ${rate.rollouts} rollouts (${percent(rate.rate)}, 95% CI ${percent(low)}–${percent(high)}), kept apart from ${agent}`;
}

/** A suite's statistics as the HTML report shows them, formatted here so every report words them alike. */
export function statisticsText(stats: SuiteStatistics): { meanReward: string; population: string; passAtK: string; variance: string | undefined; adaptive: string | undefined; infrastructure: string | undefined } {
  const { method, population } = stats.meanReward;
  return {
    meanReward: `mean reward ${meanRewardText(stats)}${method ? ` (95%, these rows: ${METHOD_NAMES[method]})` : ''}`,
    population: population ? `rows like these: ${populationText(stats)} (${METHOD_NAMES[population.method]})` : 'rows like these: – (one row)',
    passAtK: `pass@k: ${passAtKText(stats)}`,
    variance: stats.variance ? `variance: ${varianceLine(stats)}` : undefined,
    adaptive: adaptiveText(stats),
    infrastructure: infrastructureText(stats),
  };
}

/** `Wilson on all runs (0/1 rewards): greeting, All; …`: each method used, with the suites that used it. */
function methodsUsed(suites: readonly NamedStatistics[], methodOf: (stats: SuiteStatistics) => IntervalMethod | null | undefined): string {
  const byMethod = new Map<IntervalMethod, string[]>();
  for (const { name, stats } of suites) {
    const method = methodOf(stats);
    if (method) byMethod.set(method, [...(byMethod.get(method) ?? []), name]);
  }
  return [...byMethod].map(([method, names]) => `${METHOD_NAMES[method]}: ${names.join(', ')}`).join('; ');
}

/** Which interval methods the suites used: a note under a table of intervals. */
export function methodsNote(suites: readonly NamedStatistics[]): string {
  const own = methodsUsed(suites, (s) => s.meanReward.method);
  const population = methodsUsed(suites, (s) => s.meanReward.population?.method);
  if (!own) return '';
  return `95% intervals for these rows (each row's runs are the chance part) by ${own}.${population ? ` For rows like these (rows resampled) by ${population}.` : ''}`;
}

/** `between rows 0.042 · within rows 0.081 · ICC 0.34`. */
export function varianceText(split: VarianceSplit): string {
  return `between rows ${formatNumber(split.betweenRows, 4)} · within rows ${formatNumber(split.withinRows, 4)} · ICC ${formatNumber(split.icc, 2)}`;
}

/** What would halve the interval for rows like these: more rows, or more runs per row while that can. */
export function adviceText({ advice, icc }: VarianceSplit): string {
  if (icc === null) return 'every run of every row got the same reward: no spread to split';
  const rows = `${advice.rows} rows`;
  return advice.runsPerRow === null
    ? `to halve the interval for rows like these: ${rows}; more runs cannot halve it: add rows`
    : `to halve the interval for rows like these: ${rows}, or ${advice.runsPerRow} runs per row`;
}

/** A suite's variance split and advice on one line, or `undefined` without a split. */
export function varianceLine(stats: SuiteStatistics): string | undefined {
  return stats.variance ? `${varianceText(stats.variance)}; ${adviceText(stats.variance)}` : undefined;
}

/**
 * The notes under a table of suites: which interval methods were used, and for each suite with several runs
 * per row where its variance is and what would halve its interval.
 */
export function statisticsNotes(suites: readonly NamedStatistics[], overall: SuiteStatistics): string[] {
  const note = methodsNote([...suites, { name: 'All', stats: overall }]);
  const variance = suites.flatMap((suite) => {
    const line = varianceLine(suite.stats);
    return line ? [`Variance of ${suite.name}: ${line}.`] : [];
  });
  return [...(note ? [note] : []), ...variance];
}
