/**
 * The word-count task's verifier: a Grader run inside the trial (the task has no tests/). It recounts the
 * sentence of the prompt and compares it with the answer.txt the agent left in the working directory.
 */
import { readFile } from 'node:fs/promises';
import type { GraderContext } from '../../src/public/index.ts';
import { quotedSentence } from './sentence.ts';

export class WordCountGrader {
  async grade(ctx: GraderContext): Promise<Record<string, number>> {
    const expected = quotedSentence(ctx.sample?.messages ?? []).split(/\s+/).filter(Boolean).length;
    const answer = await readFile('answer.txt', 'utf8').catch(() => '');
    return { reward: Number(answer.trim()) === expected ? 1 : 0, answered: answer.trim() ? 1 : 0 };
  }
}
