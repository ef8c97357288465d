/**
 * Resolves a Docker `USER` (a name or uid, optionally `:group`) against an image's own `/etc/passwd` and
 * `/etc/group`, as the engine does. The files are the image's, so they are read as untrusted: a link in their
 * place is refused rather than followed to the host.
 */
import path from 'node:path';
import { readTrialFile } from '../../trial/trial-files.ts';

/** The numeric identity a command runs as, and its home directory. */
export interface ResolvedUser {
  uid: number;
  gid: number;
  home: string;
}

export const ROOT_USER: ResolvedUser = { uid: 0, gid: 0, home: '/root' };

/** One `name:x:id:...` table, keyed by name. */
async function table(rootfs: string, file: string): Promise<string[][]> {
  const text = (await readTrialFile(path.join(rootfs, file), 4 * 1024 * 1024).catch(() => undefined)) ?? '';
  return text.split('\n').map((line) => line.split(':')).filter((fields) => fields.length >= 3);
}

/** `user` as uid, gid and home; an empty user is root. A name the image does not know is an error naming it. */
export async function resolveUser(rootfs: string, user: string | number | undefined): Promise<ResolvedUser> {
  if (user === undefined || user === '') return ROOT_USER;
  const [who = '', group] = String(user).split(':');
  const passwd = await table(rootfs, 'etc/passwd');
  const entry = /^\d+$/.test(who) ? passwd.find((fields) => fields[2] === who) : passwd.find((fields) => fields[0] === who);
  if (!entry && !/^\d+$/.test(who)) throw new Error(`user ${who} is not in the image's /etc/passwd`);
  const uid = Number(entry?.[2] ?? who);
  let gid = Number(entry?.[3] ?? uid);
  if (group !== undefined && group !== '') gid = /^\d+$/.test(group) ? Number(group) : await groupId(rootfs, group);
  return { uid, gid, home: entry?.[5] || '/' };
}

async function groupId(rootfs: string, name: string): Promise<number> {
  const entry = (await table(rootfs, 'etc/group')).find((fields) => fields[0] === name);
  if (!entry) throw new Error(`group ${name} is not in the image's /etc/group`);
  return Number(entry[2]);
}
