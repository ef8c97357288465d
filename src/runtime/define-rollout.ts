import { registerSuite, type RolloutSuite } from './suite.ts';
import type { AgentWorkflowConfig, GraderConfig } from './workflow.ts';

/**
 * Declares a rollout suite in a `*.rollout.ts` file: a dataset run through a workflow and scored by a grader.
 * A file may declare several. Returns the suite unchanged (a typed identity helper).
 *
 * @example
 * ```ts
 * export default defineRollout({
 *   name: 'math',
 *   dataset: './math.jsonl',
 *   workflow: MathAgent,
 *   grader: ExactMatch,
 *   n: 4,
 * });
 * ```
 */
export function defineRollout<TW = AgentWorkflowConfig, TG = GraderConfig>(suite: RolloutSuite<TW, TG>): RolloutSuite<TW, TG> {
  definitionStacks.set(suite, new Error('defineRollout').stack ?? '');
  registerSuite(suite);
  return suite;
}

/** Where each suite was declared, as the stack of its `defineRollout` call: reports point failures there. */
const definitionStacks = new WeakMap<object, string>();

/** The stack of the `defineRollout` call that declared `suite`, if it was declared by one. */
export function definitionStack(suite: object): string | undefined {
  return definitionStacks.get(suite);
}
