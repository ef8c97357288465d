/** The signals that end a run cleanly, and the exit code of each (128 + the signal's number). */
export const STOP_SIGNALS = { sigint: 130, sigterm: 143, sighup: 129 } as const;
export type StopSignal = keyof typeof STOP_SIGNALS;
