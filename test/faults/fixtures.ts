import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COMMON } from '../helpers/project.ts';

/** Rows whose workflow writes a marker file first: a run that fails in preflight leaves none. */
export const markedRollout = (rows: number, answerBytes = 0) => `${COMMON}
import { appendFileSync } from 'node:fs';
export class Marked extends Echo {
  async run(ctx) {
    appendFileSync(new URL('./ran.txt', import.meta.url), 'x');
    const messages = await super.run(ctx);
    return [...messages, { role: 'assistant', content: 'x'.repeat(${answerBytes}) }];
  }
}
export class LastButOne extends Exact {
  grade(ctx) {
    return ctx.sample.messages.at(-2).content === ctx.label ? 1 : 0;
  }
}
defineRollout({
  name: 'rows',
  dataset: Array.from({ length: ${rows} }, (_, i) => ({ prompt: 'p' + i, label: 'p' + i })),
  workflow: Marked,
  grader: LastButOne,
});`;

/** Whether any rollout of {@link markedRollout} started. */
export const ranAny = (dir: string) => {
  try {
    return readFileSync(path.join(dir, 'ran.txt'), 'utf8').length > 0;
  } catch {
    return false;
  }
};

