import type { SourceLocation } from '../stack/user-frame.ts';

/** Text kept in a report, cut to a readable size; `chars` is the full length, so the reader knows what was cut. */
export interface TextExcerpt {
  text: string;
  chars: number;
}

/** The last lines a verifier printed on one stream; `lines` is how many it printed in all. */
export interface OutputExcerpt {
  stream: 'stdout' | 'stderr';
  text: string;
  lines: number;
}

/** What a report shows of a rollout that did not pass, to tell why without opening the samples. */
export interface RolloutDetails {
  /** The agent's final answer: the last assistant message of the last sample. */
  answer?: TextExcerpt | undefined;
  /** The row's label, as text. */
  label?: TextExcerpt | undefined;
  /** The first stack frame of the user's own code in the error's stack. */
  frame?: SourceLocation | undefined;
  /** The end of what a Harbor task's verifier (`tests/test.sh`) printed, stdout then stderr. */
  verifierOutput?: OutputExcerpt[] | undefined;
}
