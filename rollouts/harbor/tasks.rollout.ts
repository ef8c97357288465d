/**
 * Harbor tasks run as isolated trials: each rollout gets its own bubblewrap sandbox on the task's image
 * (built from environment/Dockerfile; the host's root, read-only, without a docker engine), with a private
 * writable layer and no network. `hello-file` is verified by its tests/test.sh, `word-count` by a Grader
 * that runs inside the trial. The oracle suite validates a task with its own solution/solve.sh.
 */
import { defineRollout } from 'rollout-test';
import { HelloFileAgent } from '../../tasks/hello-file/agent.ts';
import { WordCountAgent } from '../../tasks/word-count/agent.ts';
import { WordCountGrader } from '../../tasks/word-count/grader.ts';

defineRollout({
  name: 'harbor: hello-file',
  workflow: HelloFileAgent,
  backend: { type: 'harbor', taskDir: '../../tasks/hello-file', environment: 'sandbox' },
});

defineRollout({
  name: 'harbor: word-count',
  workflow: WordCountAgent,
  grader: WordCountGrader,
  backend: { type: 'harbor', taskDir: '../../tasks/word-count', environment: 'sandbox' },
});

defineRollout({
  name: 'harbor: hello-file (oracle)',
  workflow: 'oracle',
  backend: { type: 'harbor', taskDir: '../../tasks/hello-file', environment: 'sandbox' },
});
