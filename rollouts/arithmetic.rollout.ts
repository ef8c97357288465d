/**
 * A spread of rewards: a "calculator" agent that only knows + and -, a grader that gives partial credit
 * for a number of the right magnitude. Run each row 4 times to see pass@k.
 */
import { AgentWorkflow, Grader, defineRollout, type AgentWorkflowContext, type GraderContext } from 'rollout-test';

class AddSubAgent extends AgentWorkflow {
  async run(ctx: AgentWorkflowContext) {
    const question = String(ctx.prompt.at(-1)?.content ?? '');
    const match = /^(\d+)\s*([+-])\s*(\d+)$/.exec(question);
    const answer = match ? String(match[2] === '+' ? Number(match[1]) + Number(match[3]) : Number(match[1]) - Number(match[3])) : String(question.length);
    ctx.logger.info('question %s → %s', question, answer);
    return [...ctx.prompt, { role: 'assistant' as const, content: answer }];
  }
}

/** 1 for the exact answer, 0.5 when within a factor of two, else 0. */
class CloseEnough extends Grader {
  grade(ctx: GraderContext) {
    const got = Number(ctx.sample?.messages.at(-1)?.content);
    const want = Number(ctx.label);
    if (got === want) return 1;
    return got > 0 && want > 0 && Math.max(got / want, want / got) <= 2 ? 0.5 : 0;
  }
}

defineRollout({
  name: 'arithmetic',
  dataset: './data/arithmetic.jsonl',
  workflow: AddSubAgent,
  grader: CloseEnough,
  n: 4,
});
