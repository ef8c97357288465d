/**
 * A multi-turn, tool-using agent on the official OpenAI client. It is written on the Vercel AI SDK and the OpenAI
 * Agents SDK too, in rollout files of their own (ai-sdk-calculator.rollout.ts, agents-sdk-calculator.rollout.ts):
 * every thread that loads a rollout file loads every SDK it imports, the Agents SDK alone ~0.4 s of CPU. Offline by
 * default: with no endpoint set, the run starts the scripted model server named by `model.script` on loopback.
 * Point it at a real model with ROLLOUT_CHAT_COMPLETIONS_URL (and ROLLOUT_API_KEY, ROLLOUT_MODEL); every model
 * call is recorded as the sample, every turn included.
 */
import { defineRollout } from 'rollout-test';
import { CalculatorAgentWorkflow } from './agents/calculator-agent.ts';
import { calculatorSuite } from './agents/calculator-suite.ts';

defineRollout({ name: 'calculator agent', workflow: CalculatorAgentWorkflow, n: 2, ...calculatorSuite });
