/**
 * A spread of rewards: a "calculator" agent that knows + and -, and gets the other operators right in some
 * runs only; a grader that gives partial credit for a number of the right magnitude. Each row runs 4 times, so
 * pass@k rises with k where single runs are unreliable.
 */
import { AgentWorkflow, Grader, defineRollout, type AgentWorkflowContext, type GraderContext } from 'rollout-test';

const OPERATORS: Record<string, (a: number, b: number) => number> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '**': (a, b) => a ** b,
  '%': (a, b) => a % b,
};

/** Stands in for a model's sampling: fixed per rollout (its id names suite, row and run), so runs are repeatable. */
function luckyRun(rolloutId: string): boolean {
  let hash = 7;
  for (const char of rolloutId) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % 2 === 0;
}

class AddSubAgent extends AgentWorkflow {
  async run(ctx: AgentWorkflowContext) {
    const question = String(ctx.prompt.at(-1)?.content ?? '');
    const [, a, operator = '', b] = /^(\d+)\s*(\*\*|[-+*/%])\s*(\d+)$/.exec(question) ?? [];
    const knows = operator === '+' || operator === '-' || luckyRun(ctx.rolloutId);
    const answer = knows && OPERATORS[operator] ? String(OPERATORS[operator](Number(a), Number(b))) : String(question.length);
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
