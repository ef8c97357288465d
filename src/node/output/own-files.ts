import { closeSync, openSync, readSync } from 'node:fs';

/** How much of a file is read to tell whether the tool wrote it. */
const HEAD_BYTES = 512;

/** The first bytes of a file as text, or undefined when there is no file. */
function headOf(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, HEAD_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether a file stands at a place the tool chose (not one the user named) that the tool did not write, as `ours`
 * tells from its first bytes: a report never replaces a user's file (`outputDir: '.'` beside an `index.html`).
 */
export function isForeignFile(file: string, ours: (head: string) => boolean): boolean {
  const head = headOf(file);
  return head !== undefined && !ours(head);
}

/** The message of a report not written because a file of the user's stands in its place. */
export const foreignFileMessage = (file: string, howToPlace: string) =>
  `${file} exists and rollout-test did not write it: it is kept, and the report is not written there; ${howToPlace}`;
