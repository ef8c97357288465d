import os from 'node:os';
import type { RolloutRecord } from '../../types/rollout-record.ts';
import type { RunReport, SuiteReport } from '../../types/run-report.ts';
import type { SuiteStatistics } from '../../stats/index.ts';
import { totalTokens } from '../../cost/usage.ts';
import { detailLines } from '../failure-detail.ts';
import { relative, rolloutName } from '../format.ts';
import { element, escapeXml, properties } from './xml.ts';
import { partialNote } from '../run-control.ts';

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** A one-line summary of a failure for CI's list view: the reward, and the answer against the label when short. */
function failureMessage(record: RolloutRecord, passThreshold: number): string {
  const message = `reward ${record.reward ?? 'none'} is below the pass threshold ${passThreshold}`;
  const { answer, label } = record.details ?? {};
  const short = (text: string) => (text.length > 80 || text.includes('\n') ? undefined : JSON.stringify(text));
  const answerText = answer && short(answer.text);
  const labelText = label && short(label.text);
  return answerText && labelText ? `${message}: answered ${answerText}, expected ${labelText}` : message;
}

/** What JUnit viewers show as the test's output: the agent's logs and where its trial is. */
function systemOut(record: RolloutRecord): string | undefined {
  const lines = [...(record.logs ?? []), ...(record.trialDir ? [`trial: ${record.trialDir}`] : [])];
  return lines.length ? element('system-out', {}, escapeXml(lines.join('\n'))) : undefined;
}

function testcaseBody(record: RolloutRecord, passThreshold: number, root: string): string {
  const props: Array<[string, string | number]> = [['reward', record.reward ?? 'none']];
  for (const [name, value] of Object.entries(record.rewards)) if (name !== 'reward') props.push([`reward.${name}`, value]);
  if (record.error) props.push(['category', record.error.category], ['phase', record.error.phase]);
  if (record.trialDir) props.push(['trialDir', record.trialDir]);
  const parts = [properties(props)];
  if (record.status === 'skipped') parts.push(element('skipped', { message: record.skipReason === 'budget' ? 'not started: the run reached its budget' : (record.error?.message ?? 'not run') }));
  if (record.status === 'failed') {
    const message = failureMessage(record, passThreshold);
    const body = [message, ...detailLines(record, root)].join('\n');
    parts.push(element('failure', { message, type: 'RewardBelowThreshold' }, escapeXml(body)));
  }
  if (record.status === 'errored' && record.error) {
    const { category, message, stack } = record.error;
    const body = [...detailLines(record, root), ...(stack ? ['', stack] : [])].join('\n');
    parts.push(element('error', { message: message.split('\n')[0], type: category }, escapeXml(body)));
  }
  const out = systemOut(record);
  if (out) parts.push(out);
  return parts.join('');
}

/** The mean reward and pass@k with their 95% intervals and methods, and the variance split. */
function intervalProperties(stats: SuiteStatistics): Array<[string, string | number]> {
  const entries: Array<[string, string | number]> = [];
  const { mean, low, high, method, population } = stats.meanReward;
  if (mean !== null) entries.push(['meanReward', mean]);
  if (low !== null && high !== null) entries.push(['meanReward.ci95.low', low], ['meanReward.ci95.high', high], ['meanReward.method', method ?? 'n/a']);
  if (population && population.low !== null && population.high !== null) {
    entries.push(['meanReward.population.ci95.low', population.low], ['meanReward.population.ci95.high', population.high], ['meanReward.population.method', population.method]);
  }
  for (const [k, value] of Object.entries(stats.passAtK)) {
    entries.push([`pass@${k}`, value]);
    const interval = stats.passAtKInterval[k];
    if (interval) entries.push([`pass@${k}.ci95.low`, interval.low], [`pass@${k}.ci95.high`, interval.high]);
  }
  const split = stats.variance;
  if (split) entries.push(['variance.betweenRows', split.betweenRows], ['variance.withinRows', split.withinRows], ['variance.icc', split.icc ?? 'n/a']);
  return entries;
}

function suiteProperties(stats: SuiteStatistics, suite: SuiteReport): string {
  const entries: Array<[string, string | number]> = [['passThreshold', suite.passThreshold], ['runs', suite.runs]];
  entries.push(...intervalProperties(stats));
  if (stats.adaptive) {
    const { targetWidth, reached, rollouts, stopped } = stats.adaptive;
    entries.push(['adaptive.targetWidth', targetWidth], ['adaptive.reached', String(reached)], ['adaptive.rollouts', rollouts]);
    if (stopped) entries.push(['adaptive.stopped', stopped]);
  }
  for (const [k, value] of Object.entries(stats.passHatK)) entries.push([`pass^${k}`, value]);
  if (stats.trainability.zeroVarianceShare !== null) entries.push(['zeroVarianceRowShare', stats.trainability.zeroVarianceShare]);
  const b = suite.baseline;
  if (b) entries.push(['baseline.verdict', b.verdict], ['baseline.delta', b.delta ?? 'n/a'], ['baseline.pAdjusted', b.pAdjusted ?? 'n/a'], ['baseline.mde', b.mde ?? 'n/a']);
  for (const [category, count] of Object.entries(stats.errorsByCategory)) entries.push([`errors.${category}`, count]);
  if (suite.thresholdMissed) entries.push(['thresholdMissed', suite.thresholdMissed]);
  if (suite.partial) entries.push(['partial', 'true']);
  if (suite.usage) {
    const tokens = totalTokens(suite.usage);
    entries.push(['tokens.prompt', tokens.prompt], ['tokens.completion', tokens.completion], ['tokens.cached', tokens.cached]);
  }
  if (suite.cost) entries.push(['cost', suite.cost.total]);
  return properties(entries);
}

/** What a regression's failure says beside its message: the comparison's figures, as the properties hold them. */
function regressionBody(suite: SuiteReport): string {
  const figures = Object.entries(suite.baseline ?? {}).map(([name, value]) => `${name}: ${value ?? 'n/a'}`);
  return [`${suite.regression} (--fail-on-regression)`, ...figures].join('\n');
}

/**
 * Suite-level outcomes as testcases, so CI shows them: a load or dataset error is an errored testcase (as
 * Vitest does for a file that fails to import), a missed threshold, a regression that fails the run
 * (`--fail-on-regression`) or a suite with nothing to run a failed one.
 */
function suiteLevelCases(suite: SuiteReport, root: string): { xml: string[]; failures: number; errors: number } {
  const classname = relative(root, suite.file);
  const xml: string[] = [];
  if (suite.error) {
    const { message, category, stack } = suite.error;
    const name = suite.name === suite.file ? 'load' : `${suite.name} › setup`;
    const error = element('error', { message: message.split('\n')[0], type: category }, escapeXml(stack ?? message));
    xml.push(element('testcase', { classname, name, time: '0.000' }, error));
  }
  if (suite.thresholdMissed) {
    const failure = element('failure', { message: suite.thresholdMissed, type: 'ThresholdMissed' }, escapeXml(suite.thresholdMissed));
    xml.push(element('testcase', { classname, name: `${suite.name} › threshold`, time: '0.000' }, failure));
  }
  if (suite.regression) {
    const failure = element('failure', { message: suite.regression, type: 'Regression' }, escapeXml(regressionBody(suite)));
    xml.push(element('testcase', { classname, name: `${suite.name} › baseline`, time: '0.000' }, failure));
  }
  if (suite.partial) {
    const failure = element('failure', { message: partialNote(suite), type: 'BudgetReached' }, escapeXml(partialNote(suite)));
    xml.push(element('testcase', { classname, name: `${suite.name} › budget`, time: '0.000' }, failure));
  }
  const empty = suite.noRollouts && suite.passed === false;
  if (empty) {
    const failure = element('failure', { message: `no rollouts: ${suite.noRollouts}`, type: 'NoRollouts' }, escapeXml(suite.noRollouts!));
    xml.push(element('testcase', { classname, name: `${suite.name} › rollouts`, time: '0.000' }, failure));
  }
  const failures = [suite.thresholdMissed, suite.regression, suite.partial, empty].filter(Boolean).length;
  return { xml, failures, errors: suite.error ? 1 : 0 };
}

function testsuite(suite: SuiteReport, report: RunReport): string {
  const { counts } = suite.stats;
  const classname = relative(report.root, suite.file);
  const extra = suiteLevelCases(suite, report.root);
  const cases = Array.from(suite.records.inRowOrder(), (record) =>
    element('testcase', { classname, name: rolloutName(record), time: seconds(record.durationMs) }, testcaseBody(record, suite.passThreshold, report.root)),
  );
  cases.push(...extra.xml);
  return element(
    'testsuite',
    {
      name: suite.name === suite.file ? classname : suite.name,
      timestamp: report.startedAt.replace(/\.\d+Z$/, ''),
      hostname: os.hostname(),
      tests: counts.total + extra.xml.length,
      failures: counts.failed + extra.failures,
      errors: counts.errored + extra.errors,
      skipped: counts.skipped,
      time: seconds(suite.durationMs),
      file: classname,
    },
    `${suiteProperties(suite.stats, suite)}\n${cases.join('\n')}\n`,
  );
}

/**
 * The `junit` reporter's document: one testsuite per suite, one testcase per rollout, valid against the common
 * JUnit schema in `schemas/`; a testsuite at a time, so that a run of 100,000 rollouts is never one string.
 */
export function* junitXml(report: RunReport): Generator<string> {
  const suites = [...report.suites].sort((a, b) => a.file.localeCompare(b.file) || a.name.localeCompare(b.name));
  const totals = { tests: 0, failures: 0, errors: 0 };
  for (const suite of suites) {
    const extra = suiteLevelCases(suite, report.root);
    totals.tests += suite.stats.counts.total + extra.xml.length;
    totals.failures += suite.stats.counts.failed + extra.failures;
    totals.errors += suite.stats.counts.errored + extra.errors;
  }
  const root = element('testsuites', { name: 'rollout-test', ...totals, time: seconds(report.durationMs) }, '');
  yield `<?xml version="1.0" encoding="UTF-8"?>\n${root.replace('</testsuites>', '')}\n`;
  for (const suite of suites) yield `${testsuite(suite, report)}\n`;
  yield '</testsuites>\n';
}
