/**
 * The rollout file source of the served echo agent: it answers the prompt's last message, after
 * `metadata.delayMs` (ended early by a cancel), and logs its id to `metadata.countFile` when given. The grader
 * rewards an answer equal to the label. Suites are defined after it.
 */
export const ECHO_AGENT = `
import { appendFileSync } from 'node:fs';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

export class Echo extends AgentWorkflow {
  async run(ctx) {
    if (ctx.metadata.countFile) appendFileSync(ctx.metadata.countFile, ctx.rolloutId + '\\n');
    const delay = Number(ctx.metadata.delayMs ?? 0);
    if (delay) {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, delay);
        ctx.signal.addEventListener('abort', () => (clearTimeout(timer), reject(ctx.signal.reason)));
      });
    }
    return [...ctx.prompt, { role: 'assistant', content: String(ctx.prompt.at(-1).content) }];
  }
}

export class Exact extends Grader {
  grade(ctx) {
    return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
  }
}

`;
