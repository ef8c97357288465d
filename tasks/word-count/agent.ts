/** A tiny workflow that solves the word-count task: it counts the words of the quoted sentence. */
import { writeFile } from 'node:fs/promises';
import type { AgentWorkflowContext, Message } from '../../src/public/index.ts';
import { quotedSentence } from './sentence.ts';

export class WordCountAgent {
  async run(ctx: AgentWorkflowContext): Promise<Message[]> {
    const count = quotedSentence(ctx.prompt).split(/\s+/).filter(Boolean).length;
    await writeFile('answer.txt', `${count}\n`);
    return [...ctx.prompt, { role: 'assistant', content: String(count) }];
  }
}
