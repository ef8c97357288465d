import type { Message } from '../../src/public/index.ts';

/** The sentence between double quotes in the first user message: what the task asks to count. */
export function quotedSentence(messages: Message[]): string {
  const prompt = String(messages.find((m) => m.role === 'user')?.content ?? '');
  return /"([^"]*)"/.exec(prompt)?.[1] ?? '';
}
