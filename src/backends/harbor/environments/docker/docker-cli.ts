import { loadExeca } from '../exec.ts';

/** Options of {@link DockerCli.run}. */
export interface DockerCallOptions {
  /** Written to the command's stdin (e.g. a Dockerfile for `build -f -`). */
  input?: string | undefined;
  /** Kills the command when aborted. */
  signal?: AbortSignal | undefined;
}

/**
 * The docker CLI, run through execa. It talks to whichever engine its own environment points at
 * (`DOCKER_HOST`, the current context), so a local engine and a remote one are driven the same way.
 */
export class DockerCli {
  /** `command` is the CLI to run: `docker` by default, or any compatible one. */
  constructor(readonly command = 'docker') {}

  /** Runs `docker <args>` and returns its stdout; a failure throws with the CLI's own message. */
  async run(args: string[], options: DockerCallOptions = {}): Promise<string> {
    const { execa } = await loadExeca();
    const result = await execa(this.command, args, {
      reject: false,
      ...(options.input !== undefined && { input: options.input }),
      ...(options.signal && { cancelSignal: options.signal }),
    });
    if (result.exitCode === 0) return result.stdout;
    const what = `${this.command} ${args[0]}`;
    if (options.signal?.aborted) throw new Error(`${what} was stopped: ${String(options.signal.reason?.message ?? options.signal.reason)}`);
    throw new Error(`${what} failed: ${reasonOf(result)}`);
  }

  /** Whether an object (`image`, `container`) exists in the engine. */
  async exists(kind: 'image' | 'container', name: string): Promise<boolean> {
    const { execa } = await loadExeca();
    const result = await execa(this.command, [kind, 'inspect', '--format', '{{.Id}}', name], { reject: false });
    return result.exitCode === 0;
  }

  /** Fails with a message saying how to get an engine when none answers. */
  async requireEngine(): Promise<void> {
    const { execa } = await loadExeca();
    const result = await execa(this.command, ['version', '--format', '{{.Server.Version}}'], { reject: false });
    if (result.exitCode !== 0) {
      throw new Error(`the docker environment needs a running engine (${this.command} version: ${reasonOf(result)}); start dockerd or set DOCKER_HOST`);
    }
  }
}

/** Why a command failed: the end of its stderr, where the CLI says why, else execa's summary. */
function reasonOf(result: { stderr?: unknown; shortMessage?: string | undefined }): string {
  const text = String(result.stderr || result.shortMessage || 'no output');
  return text.trim().split('\n').slice(-8).join('\n');
}
