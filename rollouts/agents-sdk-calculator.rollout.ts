/** The calculator agent of calculator-agent.rollout.ts on the OpenAI Agents SDK: the same dataset, grader and model. */
import { defineRollout } from 'rollout-test';
import { AgentsSdkCalculatorWorkflow } from './agents/agents-sdk-calculator-agent.ts';
import { calculatorSuite } from './agents/calculator-suite.ts';

defineRollout({ name: 'calculator agent (Agents SDK)', workflow: AgentsSdkCalculatorWorkflow, ...calculatorSuite });
