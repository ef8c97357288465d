import { chmod, chown, lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Makes `inside` (an absolute path in the sandbox) as a directory of the overlay's upper layer, each missing
 * folder on the way with the mode and owner the image gives it. In an overlay the upper directory's attributes
 * win: a plain `mkdir -p` of a mount point under `/tmp` would turn the image's `/tmp` (1777) into root's 0755.
 */
export async function makeLayerDirs(upper: string, lower: string, inside: string): Promise<void> {
  let relative = '';
  for (const part of inside.split('/').filter(Boolean)) {
    relative = path.join(relative, part);
    const target = path.join(upper, relative);
    if (await lstat(target).then(() => true, () => false)) continue;
    const image = await lstat(path.join(lower, relative)).catch(() => undefined);
    await mkdir(target);
    if (!image?.isDirectory()) continue;
    await chmod(target, image.mode & 0o7777);
    await chown(target, image.uid, image.gid);
  }
}
