/**
 * A multi-turn, tool-using agent, written three times: on the official OpenAI client, the Vercel AI SDK and
 * the OpenAI Agents SDK. Offline by default: with no endpoint set, the run starts the scripted model server
 * named by `model.script` on loopback. Point it at a real model with ROLLOUT_CHAT_COMPLETIONS_URL (and
 * ROLLOUT_API_KEY, ROLLOUT_MODEL); every model call is recorded as the sample, every turn included.
 */
import { defineRollout } from 'rollout-test';
import { AgentsSdkCalculatorWorkflow } from './agents/agents-sdk-calculator-agent.ts';
import { AiSdkCalculatorWorkflow } from './agents/ai-sdk-calculator-agent.ts';
import { CalculatorAgentWorkflow, CalculatorGrader } from './agents/calculator-agent.ts';

const shared = {
  dataset: './agents/calculator.jsonl',
  grader: CalculatorGrader,
  workflowConfig: { model: process.env.ROLLOUT_MODEL ?? 'scripted', stream: true },
  model: { script: 'rollout-test/testing:calculatorScript' },
};

defineRollout({ name: 'calculator agent', workflow: CalculatorAgentWorkflow, n: 2, ...shared });
defineRollout({ name: 'calculator agent (AI SDK)', workflow: AiSdkCalculatorWorkflow, ...shared });
defineRollout({ name: 'calculator agent (Agents SDK)', workflow: AgentsSdkCalculatorWorkflow, ...shared });
