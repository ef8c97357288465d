/**
 * A task's `environment/docker-compose.yaml`, read and turned into the compose project a trial runs, as
 * upstream Harbor's docker environment merges it over its own `main` service. Every service shares `main`'s
 * network namespace (`network_mode: service:main`, `main` itself `none`, or the host's for a public task), so
 * services reach each other on loopback, by name through `main`'s hosts entries, and nothing is on a bridge.
 * What would reach past the trial (host paths, privileges, published ports, other networks) is refused.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ContainerConfig } from '../docker/docker-environment.ts';
import { storageVolumes } from '../docker/docker-storage.ts';

/** The service Harbor runs agents and verifiers in. */
export const MAIN_SERVICE = 'main';

/** A service other than `main`, as the task defines it. */
export interface Sidecar {
  name: string;
  /** Its `image`, or, with `build`, the build context (an absolute path). */
  image: string | undefined;
  buildContext: string | undefined;
  /** Keys passed on to compose as written. */
  config: Record<string, unknown>;
}

/** A task's compose file, checked: `main`'s additions and the sidecars. */
export interface TaskCompose {
  file: string;
  /** Named volumes `main` mounts (`name:/path`), and the services it waits for, by the condition it waits on. */
  mainVolumes: string[];
  mainDependsOn: Record<string, 'service_started' | 'service_healthy'>;
  sidecars: Sidecar[];
  /** Top-level named volumes (local, no options). */
  volumes: string[];
}

/** Keys a sidecar may set; the network keys are replaced, anything else is refused by name. */
const SIDECAR_KEYS = new Set(['image', 'build', 'command', 'entrypoint', 'environment', 'healthcheck', 'volumes', 'depends_on', 'working_dir', 'user', 'stop_signal', 'stop_grace_period', 'tmpfs', 'init']);
/** Network keys of a sidecar that its shared namespace makes moot. */
const NETWORK_KEYS = new Set(['expose', 'networks', 'network_mode', 'hostname']);
const MAIN_KEYS = new Set(['depends_on', 'volumes']);
/** The log folders a service may bind by upstream's compose variables, to the same place inside. */
const LOG_VARIABLES: Record<string, string> = { AGENT_LOGS: 'agent', VERIFIER_LOGS: 'verifier', ARTIFACTS: 'artifacts' };

/** Reads and checks a task's compose file; a key that cannot be honoured is an error naming it. */
export async function readTaskCompose(file: string): Promise<TaskCompose> {
  // Loaded here, by the tasks that have a compose file: the YAML parser costs ~85 ms of CPU to load, which every
  // process that loaded the Harbor backend (and every import of `rollout-test/node`) paid.
  const { parse } = await import('yaml');
  const document = parse(await readFile(file, 'utf8')) as unknown;
  const fail = (what: string): never => {
    throw new Error(`${file}: ${what}`);
  };
  if (!isRecord(document) || !isRecord(document.services)) fail('expected a `services` table');
  const { services, volumes = {}, ...rest } = document as { services: Record<string, unknown>; volumes?: unknown };
  for (const key of Object.keys(rest)) fail(`top-level \`${key}\` is not supported (services share one network namespace)`);
  if (!isRecord(volumes)) return fail('`volumes` must be a table');
  for (const [name, config] of Object.entries(volumes)) if (config != null && Object.keys(config as object).length) fail(`volumes.${name}: only plain named volumes are supported`);
  const compose: TaskCompose = { file, mainVolumes: [], mainDependsOn: {}, sidecars: [], volumes: Object.keys(volumes) };
  for (const [name, service] of Object.entries(services)) {
    if (!isRecord(service)) fail(`services.${name} must be a table`);
    const where = `services.${name}`;
    if (name === MAIN_SERVICE) readMain(compose, service as Record<string, unknown>, where, fail);
    else compose.sidecars.push(readSidecar(name, service as Record<string, unknown>, path.dirname(file), where, fail));
  }
  return compose;
}

function readMain(compose: TaskCompose, main: Record<string, unknown>, where: string, fail: (what: string) => never): void {
  for (const key of Object.keys(main)) if (!MAIN_KEYS.has(key)) fail(`${where}.${key}: Harbor configures main itself; only depends_on and volumes can be added`);
  compose.mainVolumes = checkVolumes(main.volumes, where, fail);
  compose.mainDependsOn = dependsOn(main.depends_on, where, fail);
}

function readSidecar(name: string, service: Record<string, unknown>, dir: string, where: string, fail: (what: string) => never): Sidecar {
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(service)) {
    if (NETWORK_KEYS.has(key)) continue;
    if (!SIDECAR_KEYS.has(key)) fail(`${where}.${key} is not supported (sidecars get no privileges, devices, ports or networks of their own)`);
    if (key !== 'image' && key !== 'build') config[key] = value;
  }
  if (service.volumes !== undefined) config.volumes = checkVolumes(service.volumes, where, fail);
  if (service.depends_on !== undefined) config.depends_on = Object.keys(dependsOn(service.depends_on, where, fail));
  const build = typeof service.build === 'string' ? { context: service.build } : service.build;
  if (build !== undefined && (!isRecord(build) || typeof build.context !== 'string' || Object.keys(build).some((key) => key !== 'context'))) {
    fail(`${where}.build: only a context (with its Dockerfile) is supported`);
  }
  const image = typeof service.image === 'string' ? service.image : undefined;
  if (!image && !build) fail(`${where} needs an image or a build`);
  const buildContext = build ? path.resolve(dir, (build as { context: string }).context) : undefined;
  return { name, image: buildContext ? undefined : image, buildContext, config };
}

/**
 * Named volumes (`name:/path[:ro]`) and upstream's log folder binds (`${HOST_ARTIFACTS_PATH}:${ENV_ARTIFACTS_PATH}`,
 * which compose fills in); a host path is refused.
 */
function checkVolumes(volumes: unknown, where: string, fail: (what: string) => never): string[] {
  if (volumes === undefined) return [];
  if (!Array.isArray(volumes) || volumes.some((volume) => typeof volume !== 'string')) return fail(`${where}.volumes: only short \`name:/path\` entries are supported`);
  for (const volume of volumes as string[]) {
    const [source = ''] = volume.split(':');
    const log = /^\$\{HOST_(\w+)_PATH\}$/.exec(source);
    if (log ? !LOG_VARIABLES[log[1]!] : !/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(source)) fail(`${where}.volumes: "${volume}": only named volumes and the trial's log folders can be mounted`);
  }
  return volumes as string[];
}

function dependsOn(value: unknown, where: string, fail: (what: string) => never): Record<string, 'service_started' | 'service_healthy'> {
  if (value === undefined) return {};
  if (Array.isArray(value)) return Object.fromEntries(value.map((name) => [String(name), 'service_started' as const]));
  if (!isRecord(value)) return fail(`${where}.depends_on must be a list or a table`);
  return Object.fromEntries(
    Object.entries(value).map(([name, spec]) => {
      const condition = isRecord(spec) ? spec.condition : undefined;
      if (condition !== undefined && condition !== 'service_started' && condition !== 'service_healthy') fail(`${where}.depends_on.${name}.condition = ${String(condition)} is not supported`);
      return [name, (condition ?? 'service_started') as 'service_started' | 'service_healthy'];
    }),
  );
}

/** The variables compose fills into the file: upstream's names for the log folders, and the task's env. */
export function composeVariables(spec: ContainerConfig, logsDir: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const [name, dir] of Object.entries(LOG_VARIABLES)) {
    const inside = path.posix.join(logsDir, dir);
    const host = spec.mounts.find(([, target]) => target === inside)?.[0];
    if (host) Object.assign(variables, { [`HOST_${name}_PATH`]: host, [`ENV_${name}_PATH`]: inside });
  }
  return variables;
}

/**
 * The project: `main` as the trial's container (Harbor's keep-alive command, its ENTRYPOINT kept) with the
 * task's volumes, every sidecar in `main`'s network namespace, reachable by name on loopback.
 */
export function composeProject(compose: TaskCompose, spec: ContainerConfig, mainImage: string, sidecarImages: Record<string, string>, keepAlive: string[]): Record<string, unknown> {
  const labels = Object.fromEntries(spec.labels.map((label) => [label.slice(0, label.indexOf('=')), label.slice(label.indexOf('=') + 1)]));
  const { cpus, memoryMb } = spec.limits;
  // With storage_mb, main's writable paths are named volumes bound to its capped filesystem, as in `docker run`.
  const storage = (spec.storage ? storageVolumes(spec.storage) : []).map(([inside, host], index): [string, string, string] => [`rollout-storage-${index}`, inside, host]);
  const main = {
    image: mainImage,
    container_name: spec.name,
    command: keepAlive,
    init: true,
    labels,
    network_mode: spec.network,
    extra_hosts: compose.sidecars.map((sidecar) => `${sidecar.name}:127.0.0.1`),
    working_dir: spec.workdir,
    environment: spec.env,
    pids_limit: spec.pidsLimit,
    ...(cpus && { cpus }),
    ...(memoryMb && { mem_limit: `${memoryMb}m`, memswap_limit: `${memoryMb}m` }),
    volumes: [
      ...spec.mounts.map(([host, inside, readOnly]) => ({ type: 'bind', source: host, target: inside, read_only: readOnly === true })),
      ...compose.mainVolumes,
      ...storage.map(([name, inside]) => `${name}:${inside}`),
    ],
    read_only: storage.length > 0,
  };
  const services: Record<string, unknown> = { [MAIN_SERVICE]: main };
  for (const sidecar of compose.sidecars) {
    services[sidecar.name] = { ...sidecar.config, image: sidecarImages[sidecar.name], labels, network_mode: `service:${MAIN_SERVICE}`, pids_limit: spec.pidsLimit };
  }
  const volumes = [...compose.volumes.map((name) => [name, {}]), ...storage.map(([name, , host]) => [name, { driver_opts: { type: 'none', o: 'bind', device: host } }])];
  return { version: '2.4', services, ...(volumes.length && { volumes: Object.fromEntries(volumes) }) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
