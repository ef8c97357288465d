/**
 * A multi-turn, tool-using agent on the official OpenAI client. Offline by default: with no endpoint set,
 * the run starts the scripted model server named by `model.script` on loopback. Point it at a real model
 * with ROLLOUT_CHAT_COMPLETIONS_URL (and ROLLOUT_API_KEY); every model call is recorded as the sample.
 */
import { defineRollout } from 'rollout-test';
import { CalculatorAgentWorkflow, CalculatorGrader } from './agents/calculator-agent.ts';

defineRollout({
  name: 'calculator agent',
  dataset: './agents/calculator.jsonl',
  workflow: CalculatorAgentWorkflow,
  grader: CalculatorGrader,
  workflowConfig: { model: process.env.ROLLOUT_MODEL ?? 'scripted', stream: true },
  model: { script: 'rollout-test:calculatorScript' },
  n: 2,
});
