/** A project whose suites call the scripted model through a tool-using agent, and the trajectories its runs write. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Trajectory } from '../../src/model/atif/index.ts';
import { makeProject, REPO } from './project.ts';

export const CALCULATOR = path.join(REPO, 'rollouts/agents/calculator-agent.ts');

/** A tool-using agent on the OpenAI client, against the scripted server, whose answers say 2 prompt tokens were cached. */
export function calculatorProject(extra: Record<string, string> = {}): string {
  return makeProject({
    'model.ts': `
import { calculatorScript } from 'rollout-test/testing';
export const cachedCalculator = async (request) => ({ ...(await calculatorScript(request)), cachedTokens: 2 });`,
    'rollout.config.ts': `export default { prices: { scripted: { prompt: 1, completion: 2, cached: 0.5 } } };`,
    'calc.rollout.ts': `
import { defineRollout } from 'rollout-test';
import { CalculatorAgentWorkflow, CalculatorGrader } from ${JSON.stringify(CALCULATOR)};
defineRollout({
  name: 'calc',
  dataset: [
    { id: 'two', system_prompt: 'Use the calculator.', user_prompt: 'Compute 2+3 and then 4*5.', label: '5, 20' },
    { id: 'none', system_prompt: 'Use the calculator.', user_prompt: 'Say hello.', label: 'nothing' },
  ],
  workflow: CalculatorAgentWorkflow,
  workflowConfig: { model: 'scripted', tokenData: true },
  grader: CalculatorGrader,
  model: { script: './model.ts:cachedCalculator' },
});
defineRollout({
  name: 'plain',
  dataset: [{ prompt: 'hi', label: 'hi' }],
  workflow: class Echo { async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: 'hi' }]; } },
  grader: (ctx) => (ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0),
});`,
    ...extra,
  });
}

/** The trajectories of the project's latest run, by file name. */
export function trajectoriesOf(project: string): Map<string, Trajectory> {
  const dir = path.join(project, '.rollouts/runs/latest/trajectories');
  return new Map(readdirSync(dir).map((name) => [name, JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as Trajectory]));
}
