import type { ResourceLimits } from '../environment.ts';

const MB = 1024 * 1024;

/** Variables the docker CLI reads itself: handing their values to it would change how the CLI runs. */
const CLI_OWN = /^(PATH|HOME|DOCKER_\w*)$/;

/**
 * `docker exec` flags for a command's variables. Most go by name only, the CLI taking the value from its own
 * environment ({@link cliEnv}), so that secrets such as the API key never appear on a command line.
 */
export function envFlags(vars: Record<string, string>): string[] {
  return Object.entries(vars).flatMap(([name, value]) => ['--env', CLI_OWN.test(name) ? `${name}=${value}` : name]);
}

/** The docker CLI's environment: the host's (for DOCKER_HOST, contexts, config) plus the values {@link envFlags} names. */
export function cliEnv(vars: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  for (const [name, value] of Object.entries(vars)) if (!CLI_OWN.test(name)) env[name] = value;
  return env;
}

/** `docker run` flags for task.toml's limits; swap is capped at the memory limit, storage as the largest file. */
export function limitFlags(limits: ResourceLimits): string[] {
  const { cpus, memoryMb, storageMb } = limits;
  return [
    ...(cpus ? ['--cpus', String(cpus)] : []),
    ...(memoryMb ? ['--memory', `${memoryMb}m`, '--memory-swap', `${memoryMb}m`] : []),
    ...(storageMb ? ['--ulimit', `fsize=${storageMb * MB}`] : []),
  ];
}

/** `--mount` flags (which, unlike `-v`, take paths containing colons) for [host, inside, read-only?] triples. */
export function mountFlags(mounts: Array<[host: string, inside: string, readOnly?: boolean]>): string[] {
  return mounts.flatMap(([host, inside, readOnly]) => ['--mount', `type=bind,source=${host},target=${inside}${readOnly ? ',readonly' : ''}`]);
}
