/**
 * A clean pass: a deterministic agent that greets by name, graded by exact match. Every rollout scores 1.
 */
import { AgentWorkflow, Grader, defineRollout, type AgentWorkflowContext, type GraderContext } from 'rollout-test';

class GreetingAgent extends AgentWorkflow {
  async run(ctx: AgentWorkflowContext) {
    const name = String(ctx.prompt.at(-1)?.content ?? '').replace(/^Greet /, '');
    return [...ctx.prompt, { role: 'assistant' as const, content: `Hello, ${name}!` }];
  }
}

class ExactMatch extends Grader {
  grade(ctx: GraderContext) {
    return ctx.sample?.messages.at(-1)?.content === ctx.label ? 1 : 0;
  }
}

defineRollout({
  name: 'greeting',
  dataset: [
    { prompt: 'Greet Ada', label: 'Hello, Ada!' },
    { prompt: 'Greet Grace', label: 'Hello, Grace!' },
    { prompt: 'Greet Linus', label: 'Hello, Linus!' },
  ],
  workflow: GreetingAgent,
  grader: ExactMatch,
  n: 2,
});
