import type { Deliveries } from './deliveries.ts';
import { failureBodies } from './protocol.ts';
import type { CallbackKind, FinishedEntry, OwedRollout } from './journal-replay.ts';

const LOST = 'the rollout server stopped before this rollout finished; it was not run to the end';

/**
 * Settles what an earlier server owed: callback bodies it had computed are sent as they were; a rollout it
 * never finished is reported as a failure through both callbacks, never left silent. Returns the finished
 * entry of a rollout that never finished, to answer status queries with.
 */
export function recoverOwed(owed: OwedRollout, deliveries: Deliveries): FinishedEntry | undefined {
  const lost = failureBodies(owed.id, 'failure', LOST);
  for (const kind of ['completion', 'grader'] as CallbackKind[]) {
    if (owed.settled.has(kind)) continue;
    const journaled = owed.owed[kind];
    if (journaled === undefined) deliveries.send(owed, kind, lost[kind]);
    else deliveries.resend(owed, kind, journaled);
  }
  if (owed.owed.grader !== undefined) return undefined;
  return { suite: owed.suite, id: owed.id, status: 'failure', reward: null, errMessage: LOST, at: Date.now() };
}
