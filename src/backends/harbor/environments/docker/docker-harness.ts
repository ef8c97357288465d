import type { DockerCli } from './docker-cli.ts';

/** Images this process has seen run the host's node. */
const compatible = new Set<string>();

/**
 * Checks that the host's node binary, mounted into the container, runs there: the image needs the same
 * dynamic loader and C libraries (glibc, libstdc++) as the host. `node --version` loads all of them, so it
 * fails exactly where the trial runner would, but before the trial has started.
 */
export async function checkHarness(cli: DockerCli, container: string, image: string, node: string): Promise<void> {
  if (compatible.has(image)) return;
  try {
    await cli.run(['exec', container, node, '--version']);
    compatible.add(image);
  } catch (error) {
    const musl = await cli.run(['exec', container, 'sh', '-c', 'ls /lib/ld-musl-*']).then(() => true, () => false);
    const why = musl ? 'it is musl-based (e.g. alpine)' : 'it lacks the dynamic loader or libraries node needs';
    throw new Error(
      `image ${image} cannot run the trial runner, which is the host's node (${node}) mounted into the container: ${why}. ` +
        `Use a glibc-based image such as debian or ubuntu. ${(error as Error).message}`,
    );
  }
}
