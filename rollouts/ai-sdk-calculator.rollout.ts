/** The calculator agent of calculator-agent.rollout.ts on the Vercel AI SDK: the same dataset, grader and model. */
import { defineRollout } from 'rollout-test';
import { AiSdkCalculatorWorkflow } from './agents/ai-sdk-calculator-agent.ts';
import { calculatorSuite } from './agents/calculator-suite.ts';

defineRollout({ name: 'calculator agent (AI SDK)', workflow: AiSdkCalculatorWorkflow, ...calculatorSuite });
