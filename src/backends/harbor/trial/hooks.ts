import type { TrialResultFile } from './trial-record.ts';

/** The trial lifecycle events that hooks can follow, in Harbor's order. */
export const TRIAL_EVENTS = [
  'trial-started',
  'environment-started',
  'agent-started',
  'agent-ended',
  'verification-started',
  'trial-ended',
  'trial-cancelled',
] as const;

/** One lifecycle event. */
export type TrialEvent = (typeof TRIAL_EVENTS)[number];

/** What a hook receives. `result` (result.json's content) comes with `trial-ended` and `trial-cancelled`. */
export interface TrialHookPayload {
  event: TrialEvent;
  trialName: string;
  taskName: string;
  requestId: string;
  trialDir: string;
  result?: TrialResultFile;
}

/** A hook; one that throws is logged and does not disturb the trial. */
export type TrialHook = (payload: TrialHookPayload) => void | Promise<void>;

/** Hooks by event. */
export type TrialHooks = Partial<Record<TrialEvent, TrialHook | TrialHook[]>>;

/** Emits one event of a trial. */
export type EmitTrialEvent = (event: TrialEvent, result?: TrialResultFile) => Promise<void>;
