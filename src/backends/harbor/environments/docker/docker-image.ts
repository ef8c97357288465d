import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { ImageSource } from '../environment.ts';
import type { DockerCli } from './docker-cli.ts';
import { LOCAL_BASE_IMAGE, LOCAL_PYTHON_IMAGE, localImage } from './image-map.ts';
import type { ImageMap } from '../../../../model/suite-options.ts';

/** Labels every image the environment builds, so they can be listed and pruned together. */
export const TASK_LABEL = 'rollout-test.task';

/** How to get a task's image. */
export interface ImageRequest {
  source: ImageSource;
  /** Public image names (FROM lines, `docker_image`) → local images. */
  imageMap: ImageMap;
  /** Build once per process and reuse an image already tagged, rather than build for every trial. */
  prebuild: boolean;
  /** The network of `RUN` steps. */
  buildNetwork: 'none' | 'host';
  signal?: AbortSignal | undefined;
}

/** Builds of this process by CLI and tag: trials of one task wait for the same build. */
const prebuilt = new Map<string, Promise<string>>();

/**
 * The image a trial runs: `docker_image` when the task names one, else its `environment/Dockerfile` built
 * under a tag that hashes the environment directory, so a changed environment is rebuilt and an unchanged one
 * is found again. Images are never pulled: trials have no registry, and a missing image is an error saying so.
 */
export async function resolveImage(cli: DockerCli, request: ImageRequest): Promise<string> {
  const { source, imageMap } = request;
  if (source.dockerImage) return requireLocal(cli, await localImage(cli, source.dockerImage, imageMap));
  const dockerfile = withoutCopyChmod(await mapBaseImages(cli, await readDockerfile(source), imageMap));
  const tag = `rollout-test/${safeName(source.taskName)}:${await contextHash(source.environmentDir!, dockerfile)}`;
  if (!request.prebuild) return build(cli, tag, dockerfile, request);
  const key = `${cli.command}\0${tag}`;
  let pending = prebuilt.get(key);
  if (!pending) {
    // A shared build is not tied to the first trial's cancel; each trial stops waiting on its own.
    pending = buildUnlessPresent(cli, tag, dockerfile, { ...request, signal: undefined });
    prebuilt.set(key, pending);
    pending.catch(() => prebuilt.delete(key));
  }
  return untilAborted(pending, request.signal, 'the image build');
}

/** What a trial needs to know of an image's config. */
export interface ImageConfig {
  /** WORKDIR, where Harbor runs commands when task.toml sets no `workdir`; `/` when it has none. */
  workdir: string;
  /** Whether it has an ENTRYPOINT, which gets the container's command (and may not run it as given). */
  hasEntrypoint: boolean;
  /** USER, empty for root. */
  user: string;
}

/** Lookups of this process by CLI and image; a failed one is not kept, so an image built later is found. */
const inspected = new Map<string, Promise<ImageConfig>>();

/**
 * The image's config, looked up once per image and process (`docker image inspect` costs a round trip to the
 * engine on every trial otherwise). Rejects when the engine lacks the image.
 */
export function inspectImage(cli: DockerCli, image: string): Promise<ImageConfig> {
  const key = `${cli.command}\0${image}`;
  let pending = inspected.get(key);
  if (!pending) {
    pending = cli.run(['image', 'inspect', '--format', '{{json .Config}}', image]).then(parseImageConfig);
    inspected.set(key, pending);
    pending.catch(() => inspected.delete(key));
  }
  return pending;
}

function parseImageConfig(json: string): ImageConfig {
  const config = (JSON.parse(json) ?? {}) as { WorkingDir?: string; Entrypoint?: string[] | null; User?: string };
  return { workdir: config.WorkingDir || '/', hasEntrypoint: Boolean(config.Entrypoint?.length), user: config.User ?? '' };
}

/**
 * `COPY --chmod=MODE src dest` (as in Harbor's example Dockerfiles) needs BuildKit, which a docker CLI without
 * buildx lacks; for a single file copied to a file path it becomes `COPY src dest` and `RUN chmod MODE dest`,
 * which any builder runs. Other `--chmod` copies are left as written.
 */
export function withoutCopyChmod(dockerfile: string): string {
  return dockerfile.replace(/^(\s*)COPY\s+--chmod=([0-7]{3,4})\s+(\S+)\s+(\/\S*[^/\s])\s*$/gim, '$1COPY $3 $4\n$1RUN chmod $2 $4');
}

const FROM_LINE = /^(\s*FROM\s+(?:--\S+\s+)*)(\S+)/gim;

/** Rewrites the image of each `FROM` line to its {@link localImage}; stage names and other images stay. */
export async function mapBaseImages(cli: DockerCli, dockerfile: string, imageMap: ImageMap): Promise<string> {
  const images = new Map<string, string>();
  for (const [, , image] of dockerfile.matchAll(FROM_LINE)) images.set(image!, await localImage(cli, image!, imageMap));
  return dockerfile.replace(FROM_LINE, (_, head: string, image: string) => head + images.get(image));
}

async function requireLocal(cli: DockerCli, image: string): Promise<string> {
  if (await inspectImage(cli, image).then(() => true, () => false)) return image;
  const ours = image === LOCAL_BASE_IMAGE || image === LOCAL_PYTHON_IMAGE ? ' (npm run docker:base builds it)' : '';
  throw new Error(`image ${image} is not in the docker engine, and trials never pull: build or load it${ours}, or map it onto a local image with imageMap`);
}

async function readDockerfile(source: ImageSource): Promise<string> {
  const file = source.environmentDir && path.join(source.environmentDir, 'Dockerfile');
  if (file && existsSync(file)) return readFile(file, 'utf8');
  const compose = source.environmentDir && existsSync(path.join(source.environmentDir, 'docker-compose.yaml'));
  // A compose file only adds services beside main: main's own image still comes from a Dockerfile or docker_image.
  const where = compose
    ? `its main container has no image: ${source.environmentDir} has a docker-compose.yaml but no Dockerfile,`
    : source.environmentDir ? `${source.environmentDir} has no Dockerfile` : 'it has no environment/Dockerfile';
  throw new Error(`task ${source.taskName} cannot run in docker: ${where} and task.toml sets no [environment] docker_image`);
}

/** A hash of every file of the build context (names, contents, link targets) and the Dockerfile as built. */
async function contextHash(dir: string, dockerfile: string): Promise<string> {
  const hash = createHash('sha256').update(dockerfile);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.map((entry) => ({ entry, file: path.join(entry.parentPath, entry.name) })).sort((a, b) => (a.file < b.file ? -1 : 1));
  for (const { entry, file } of files) {
    if (entry.isDirectory()) continue;
    hash.update(`\0${path.relative(dir, file)}\0`);
    hash.update(entry.isSymbolicLink() ? await readlink(file) : await readFile(file));
  }
  return hash.digest('hex').slice(0, 16);
}

/** A repository name docker accepts: lowercase letters, digits and single separators. */
function safeName(name: string): string {
  return `task-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'unnamed'}`;
}

async function buildUnlessPresent(cli: DockerCli, tag: string, dockerfile: string, request: ImageRequest): Promise<string> {
  return (await cli.exists('image', tag)) ? tag : build(cli, tag, dockerfile, request);
}

/** `docker build` with the Dockerfile on stdin (so FROM lines can be mapped without copying the context), killed at the deadline. */
async function build(cli: DockerCli, tag: string, dockerfile: string, request: ImageRequest): Promise<string> {
  const seconds = request.source.buildTimeoutSec;
  const deadline = AbortSignal.timeout(seconds * 1000);
  const signal = request.signal ? AbortSignal.any([deadline, request.signal]) : deadline;
  const args = ['build', '--quiet', '--network', request.buildNetwork, '--label', `${TASK_LABEL}=${request.source.taskName}`, '-t', tag, '-f', '-', request.source.environmentDir!];
  try {
    await cli.run(args, { input: dockerfile, signal });
  } catch (error) {
    if (deadline.aborted) throw new Error(`building ${tag} exceeded build_timeout_sec of ${seconds}s`);
    throw error;
  }
  return tag;
}

/** Waits for `work` unless `signal` aborts first, then rejects saying it was cancelled while waiting for `what`. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(`cancelled while waiting for ${what}`));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
