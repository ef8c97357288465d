/** What the calculator agent's three suites share, one per SDK (one rollout file each): the dataset, grader, model. */
import { CalculatorGrader } from './calculator-agent.ts';

export const calculatorSuite = {
  dataset: './agents/calculator.jsonl',
  grader: CalculatorGrader,
  workflowConfig: { model: process.env.ROLLOUT_MODEL ?? 'scripted', stream: true },
  model: { script: 'rollout-test/testing:calculatorScript' },
};
