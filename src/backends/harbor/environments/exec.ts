/**
 * execa, imported on first use. Every rollout file imports rollout-test, in the main thread and in every
 * worker; runs without Harbor trials should not pay for loading it (about 60 ms here).
 */
let execaModule: Promise<typeof import('execa')> | undefined;

export function loadExeca(): Promise<typeof import('execa')> {
  execaModule ??= import('execa');
  return execaModule;
}
