import type { DockerCli } from './docker-cli.ts';
import type { ImageMap } from '../../../../model/suite-options.ts';

/** The images `scripts/docker-base.sh` (`npm run docker:base`) builds offline with debootstrap. */
export const LOCAL_BASE_IMAGE = 'rollout-test/debian:bookworm';
export const LOCAL_PYTHON_IMAGE = 'rollout-test/python:bookworm';

/**
 * Where public images go when the engine lacks them and the user's `imageMap` does not say: tasks written for
 * common public images (upstream Harbor's examples start FROM `python:3.12-slim`, `ubuntu:24.04`, and an
 * `alpine` sidecar that only runs `sh`) run offline on the local Debian images, python ones with Debian's python3.
 */
const DEFAULT_IMAGE_MAP: ImageMap = {
  'python:*': LOCAL_PYTHON_IMAGE,
  'ubuntu:*': LOCAL_BASE_IMAGE,
  'debian:*': LOCAL_BASE_IMAGE,
  'alpine:*': LOCAL_BASE_IMAGE,
};

/** The image `map` gives `image`: its exact key, else the first key with `*` (any characters) that matches. */
function mappedImage(image: string, map: ImageMap): string | undefined {
  if (Object.hasOwn(map, image)) return map[image];
  for (const [pattern, target] of Object.entries(map)) {
    if (pattern.includes('*') && globRegExp(pattern).test(image)) return target;
  }
  return undefined;
}

/**
 * The local image a public one becomes: the user's `imageMap` first; else the image itself when the engine has
 * it (a user who loaded the real `python:3.12-slim` gets it; asked once per process); else
 * {@link DEFAULT_IMAGE_MAP}; else unchanged, which the build or `docker_image` lookup reports as missing.
 */
export async function localImage(cli: DockerCli, image: string, imageMap: ImageMap): Promise<string> {
  const mine = mappedImage(image, imageMap);
  if (mine !== undefined) return mine;
  const fallback = mappedImage(image, DEFAULT_IMAGE_MAP);
  if (fallback === undefined || (await engineHas(cli, image))) return image;
  return fallback;
}

/** Whether the engine has a public image, asked once per CLI, image and process rather than once per trial. */
const present = new Map<string, Promise<boolean>>();

function engineHas(cli: DockerCli, image: string): Promise<boolean> {
  const key = `${cli.command}\0${image}`;
  let pending = present.get(key);
  if (!pending) {
    pending = cli.exists('image', image);
    present.set(key, pending);
    pending.catch(() => present.delete(key));
  }
  return pending;
}

function globRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}
