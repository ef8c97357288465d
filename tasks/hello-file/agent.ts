/** A tiny workflow that solves the hello-file task: run it with `--backend harbor` and workflow "./agent.ts:HelloFileAgent". */
import { writeFile } from 'node:fs/promises';
import type { AgentWorkflowContext, Message } from '../../src/public/index.ts';

export class HelloFileAgent {
  async run(ctx: AgentWorkflowContext): Promise<Message[]> {
    // The workflow runs inside the trial, whose working directory is the task's workdir.
    await writeFile('hello.txt', 'Hello, world!\n');
    ctx.logger.info('wrote hello.txt in', process.cwd());
    return [...ctx.prompt, { role: 'assistant', content: 'I created hello.txt.' }];
  }
}
