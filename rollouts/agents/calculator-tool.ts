/**
 * The calculator tool the example agents share: a small recursive-descent evaluator of `+ - * /`, parentheses and
 * decimals (never `eval`: the expression comes from the model).
 */
import { z } from 'zod';
import type { AgentWorkflowConfig, GraderContext } from 'rollout-test';

/** Settings of the example calculator agents. */
export interface CalculatorAgentConfig extends AgentWorkflowConfig {
  /** Model name sent to the endpoint; the scripted server accepts any. */
  model?: string;
  /** Model turns before giving up. */
  maxTurns?: number;
  /** Stream the answers (the recorded sample is the same). */
  stream?: boolean;
  /** Ask for logprobs and vLLM-style token ids, for training data. */
  tokenData?: boolean;
}

export const CALCULATOR_DESCRIPTION = 'Evaluates an arithmetic expression with + - * / and parentheses.';

/** JSON Schema of the tool's arguments, for clients that take one. */
export const CALCULATOR_PARAMETERS = {
  type: 'object',
  properties: { expression: { type: 'string', description: 'e.g. "(2 + 3) * 4"' } },
  required: ['expression'],
  additionalProperties: false,
} as const;

export function evaluate(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = () => tokens[at++];
  const primary = (): number => {
    const token = take();
    if (token === '(') {
      const value = sum();
      if (take() !== ')') throw new SyntaxError(`missing ")" in ${expression}`);
      return value;
    }
    if (token === '-') return -primary();
    if (token === undefined || Number.isNaN(Number(token))) throw new SyntaxError(`unexpected "${token ?? 'end'}" in ${expression}`);
    return Number(token);
  };
  const product = (): number => {
    let value = primary();
    while (peek() === '*' || peek() === '/') value = take() === '*' ? value * primary() : value / primary();
    return value;
  };
  const sum = (): number => {
    let value = product();
    while (peek() === '+' || peek() === '-') value = take() === '+' ? value + product() : value - product();
    return value;
  };
  const value = sum();
  if (at !== tokens.length) throw new SyntaxError(`unexpected "${peek()}" in ${expression}`);
  return value;
}

/** The tool's arguments as a zod schema, for the SDKs that take one. */
export const CALCULATOR_INPUT = z.object({ expression: z.string() });

/** The tool's implementation in the SDKs' `execute` shape. */
export const executeCalculator = async ({ expression }: z.infer<typeof CALCULATOR_INPUT>) => runCalculator(expression);

/** What the tool answers the model: the value, or the error so the model can correct itself. */
export function runCalculator(expression: string): string {
  try {
    return String(evaluate(expression));
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

/** Reward: the share of the label's comma-separated expected values found in the final answer. */
export function gradeFinalAnswer(ctx: GraderContext): number {
  const answer = String(ctx.sample?.messages.at(-1)?.content ?? '');
  const expected = String(ctx.label ?? '').split(',').map((v) => v.trim()).filter(Boolean);
  if (expected.length === 0) return 0;
  return expected.filter((value) => answer.includes(value)).length / expected.length;
}
