import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { EnvironmentType } from './environment.ts';

const run = promisify(execFile);

/** An environment the machine cannot provide: the suite fails once, in setup, with how to get it. */
export class EnvironmentUnavailable extends Error {
  override name = 'EnvironmentUnavailable';
  constructor(message: string) {
    super(message);
    // The message says it all; a stack of Node internals would only hide it.
    this.stack = `${this.name}: ${message}`;
  }
}

const PROBES: Partial<Record<EnvironmentType, { command: string; args: string[]; missing: string; failing: string }>> = {
  sandbox: {
    command: 'bwrap',
    args: ['--version'],
    missing: 'the sandbox environment needs bubblewrap, which is not installed: install it (apt-get install bubblewrap), or choose --env docker or --env process',
    failing: 'the sandbox environment needs bubblewrap, which does not run here',
  },
  docker: {
    command: 'docker',
    args: ['version', '--format', '{{.Server.Version}}'],
    missing: 'the docker environment needs the docker CLI, which is not installed: install Docker (apt-get install docker.io), or choose --env sandbox',
    failing: 'the docker environment needs a running Docker engine, which cannot be reached: start it (dockerd, or systemctl start docker)',
  },
};

/** Checks once, before a harbor suite's first trial, that its environment can run on this machine. */
export async function checkEnvironment(type: EnvironmentType): Promise<void> {
  const probe = PROBES[type];
  if (!probe) return;
  try {
    await run(probe.command, probe.args, { timeout: 30_000 });
  } catch (error) {
    const { code, stderr } = error as NodeJS.ErrnoException & { stderr?: string };
    if (code === 'ENOENT') throw new EnvironmentUnavailable(probe.missing);
    const said = String(stderr ?? '').trim().split('\n')[0] || (error as Error).message;
    throw new EnvironmentUnavailable(`${probe.failing} (${said})`);
  }
}
