import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EnvironmentInit } from '../environment.ts';
import { loadExeca } from '../exec.ts';
import { DockerEnvironment } from '../docker/docker-environment.ts';
import { type ContainerOwner, type ContainerSpec, installByExec, KEEP_ALIVE, type StartedContainer } from '../docker/container-start.ts';
import { resolveImage } from '../docker/docker-image.ts';
import { composeProject, composeVariables, readTaskCompose, type TaskCompose } from './compose-file.ts';

/** How long a sidecar that `main` depends on may take to come up (or become healthy). */
const SIDECAR_START_MS = 120_000;

/**
 * A docker trial of a task with `environment/docker-compose.yaml`, as upstream Harbor runs one: the task's
 * services started with Debian's `docker-compose`, `main` being the trial's container (built from
 * `environment/Dockerfile` as in a single-container trial) in which the agent and the verifier run. The
 * sidecars' images are built or mapped as main's is (never pulled), and every service shares main's network
 * namespace (see {@link composeProject}). The project, its containers and volumes are removed on stop.
 */
export class ComposeEnvironment extends DockerEnvironment {
  readonly #composeFile: string;
  /** The project's folder (its compose file) and name, once written. */
  #project: { dir: string; name: string; file: string; env: Record<string, string> } | undefined;

  constructor(init: EnvironmentInit, options: Record<string, unknown>, composeFile: string) {
    super(init, options);
    this.#composeFile = composeFile;
  }

  protected override async startContainer(spec: ContainerSpec, root: string, owner: ContainerOwner): Promise<StartedContainer> {
    const compose = await readTaskCompose(this.#composeFile);
    const images = await this.#sidecarImages(compose, owner.signal);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-compose-'));
    const name = `rollout-${randomUUID()}`;
    owner.onName?.(name);
    const main = this.containerConfig(name, spec, root, owner);
    // Compose names containers and volumes after the project: unique per trial, and naming its runner.
    const project = `rollout-${randomUUID().slice(0, 8)}-${process.pid}`;
    const file = path.join(dir, 'docker-compose.json');
    this.#project = { dir, name: project, file, env: composeVariables(main, this.paths.logs) };
    await writeFile(file, JSON.stringify(composeProject(compose, main, spec.image, images, KEEP_ALIVE), null, 2));
    await this.#compose(['up', '--detach', '--no-build'], owner.signal);
    await this.#waitForDependencies(compose, owner.signal);
    const id = (await this.docker.cli.run(['inspect', '--format', '{{.Id}}', name])).trim();
    // Compose starts main as Harbor's long-running command, so the user's code is copied in afterwards.
    const installed = spec.userCode ? installByExec(spec.cli, name, spec.userCode) : Promise.resolve();
    installed.catch(() => undefined);
    return { name, id, cli: spec.cli, root, logs: owner.logs, installed };
  }

  /** Each sidecar's image: its build context built, or its image mapped, as main's; never pulled. */
  async #sidecarImages(compose: TaskCompose, signal: AbortSignal | undefined): Promise<Record<string, string>> {
    const { imageMap, buildNetwork } = this.docker.options;
    const images: Record<string, string> = {};
    for (const sidecar of compose.sidecars) {
      const source = { taskName: `${this.init.image.taskName}-${sidecar.name}`, environmentDir: sidecar.buildContext, dockerImage: sidecar.image, buildTimeoutSec: this.init.image.buildTimeoutSec };
      images[sidecar.name] = await resolveImage(this.docker.cli, { source, imageMap, prebuild: true, buildNetwork, signal });
    }
    return images;
  }

  /** Waits, as compose's `depends_on` conditions on main would have, for each service main depends on. */
  async #waitForDependencies(compose: TaskCompose, signal: AbortSignal | undefined): Promise<void> {
    const until = Date.now() + SIDECAR_START_MS;
    for (const [service, condition] of Object.entries(compose.mainDependsOn)) {
      const container = (await this.#compose(['ps', '--quiet', service], signal)).trim();
      for (;;) {
        const state = (await this.docker.cli.run(['inspect', '--format', '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}', container])).trim();
        const [status, health] = state.split(' ');
        if (status !== 'running' && status !== 'created') throw new Error(`service ${service} is ${status}: ${await this.#logsOf(service)}`);
        if (condition === 'service_started' || health === 'healthy') break;
        if (health === 'unhealthy') throw new Error(`service ${service} is unhealthy: ${await this.#logsOf(service)}`);
        if (Date.now() > until || signal?.aborted) throw new Error(`service ${service} did not become ${condition === 'service_healthy' ? 'healthy' : 'running'} within ${SIDECAR_START_MS / 1000}s`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  async #logsOf(service: string): Promise<string> {
    const logs = await this.#compose(['logs', '--no-color', '--tail', '10', service]).catch((error: Error) => error.message);
    return logs.trim() || '(no output)';
  }

  /** Runs `docker-compose` on the project with only the variables its file may use: no host secret reaches it. */
  async #compose(args: string[], signal?: AbortSignal): Promise<string> {
    const project = this.#project!;
    const { execa } = await loadExeca();
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...(process.env.DOCKER_HOST && { DOCKER_HOST: process.env.DOCKER_HOST }), ...this.init.env, ...project.env };
    const result = await execa('docker-compose', ['--project-name', project.name, '--file', project.file, ...args], { env, extendEnv: false, reject: false, ...(signal && { cancelSignal: signal }) });
    if (result.exitCode === 0) return result.stdout;
    throw new Error(`docker-compose ${args[0]} failed: ${String(result.stderr || result.shortMessage).trim().split('\n').slice(-8).join('\n')}`);
  }

  /** The main container goes first (with its trial's processes), then the project with its volumes. */
  override async stop(): Promise<void> {
    try {
      await super.stop();
    } finally {
      if (this.#project) {
        await this.#compose(['down', '--volumes', '--remove-orphans', '--timeout', '1']);
        await rm(this.#project.dir, { recursive: true, force: true });
        this.#project = undefined;
      }
    }
  }
}
