/**
 * A categorized failure: an agent whose tool raises for questions it has no entry for (AGENT_ERROR), and a
 * grader that rejects a malformed answer with an assertion (VALIDATION_ERROR).
 */
import assert from 'node:assert';
import { AgentWorkflow, Grader, defineRollout, type AgentWorkflowContext, type GraderContext } from 'rollout-test';

const CAPITALS: Record<string, string> = { France: 'Paris', Japan: 'Tokyo' };

class LookupAgent extends AgentWorkflow {
  async run(ctx: AgentWorkflowContext) {
    const question = String(ctx.prompt.at(-1)?.content ?? '');
    const country = /capital of (\w+)/.exec(question)?.[1];
    if (!country) throw new Error(`lookup tool has no entry for ${JSON.stringify(question)}`);
    return [...ctx.prompt, { role: 'assistant' as const, content: CAPITALS[country] ?? '' }];
  }
}

class AnswerGrader extends Grader {
  grade(ctx: GraderContext) {
    const answer = ctx.sample?.messages.at(-1)?.content;
    assert.ok(typeof answer === 'string' && answer.length > 0, 'the answer must be a non-empty string');
    return answer === ctx.label ? 1 : 0;
  }
}

defineRollout({
  name: 'lookup',
  dataset: './data/lookup.csv',
  workflow: LookupAgent,
  grader: AnswerGrader,
});
