import { existsSync } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { ArtifactEntry } from '../task/task-config.ts';
import { readTrialFile, writeTrialFile } from './trial-files.ts';
import type { TrialRun } from './trial-run.ts';

/** Where the agent publishes artifacts (Harbor's convention folder), collected always. */
const CONVENTION_SOURCE = '/logs/artifacts';

/** One line of `artifacts/manifest.json`, as Harbor writes it. */
export interface ManifestEntry {
  source: string;
  destination: string;
  type: 'file' | 'directory';
  status: 'ok' | 'failed' | 'empty' | 'skipped';
  service: string | null;
}

interface Artifact {
  source: string;
  destination?: string | undefined;
  exclude: string[];
}

const normalized = (entry: ArtifactEntry): Artifact => (typeof entry === 'string' ? { source: entry, exclude: [] } : entry);

/** Where an artifact lands under `artifacts/`: its destination, else its source path mirrored. */
function relativeTarget(artifact: Artifact): string {
  const parts = (artifact.destination ?? artifact.source).split('/').filter((part) => part && part !== '.' && part !== '..');
  return parts.join('/');
}

/** The host path an `artifacts` entry is collected to, under the trial's `artifacts/`. */
export function artifactHostPath(artifactsDir: string, entry: ArtifactEntry): string {
  return path.join(artifactsDir, relativeTarget(normalized(entry)));
}

/** A glob of `exclude` (`*`, `?`, `**`) as a regular expression over a relative path or a name. */
function globPattern(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\0').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]').replace(/\0/g, '.*');
  return new RegExp(`^${body}$`);
}

/** Removes what an artifact's `exclude` patterns name (matched against each entry's relative path and its name). */
async function applyExcludes(dir: string, exclude: string[]): Promise<void> {
  if (!exclude.length) return;
  const patterns = exclude.map(globPattern);
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    const relative = path.relative(dir, file);
    if (patterns.some((pattern) => pattern.test(relative) || pattern.test(entry.name))) await rm(file, { recursive: true, force: true });
  }
}

/**
 * Runs the main service's `[[verifier.collect]]` hooks, then collects artifacts as Harbor does, best effort:
 * the convention folder `/logs/artifacts` (mounted, so only recorded), then each configured entry copied to
 * `artifacts/<destination>` or `artifacts/<source path>`. Every attempt is a line of `artifacts/manifest.json`;
 * a path the environment cannot give (missing, or outside what the process environment shares) is `failed`.
 */
export async function collectArtifacts(run: TrialRun, entries: ArtifactEntry[], hooks: TrialRun['task']['config']['verifier']['collect']): Promise<void> {
  for (const hook of hooks) {
    const exec = await run.env.exec(['sh', '-c', hook.command], { timeoutMs: hook.timeout_sec * 1000, signal: run.signal, user: hook.user });
    if (exec.exitCode !== 0) await run.recorder.log(`collect hook exited with code ${exec.exitCode}: ${hook.command}`);
  }
  const dir = run.paths.artifactsDir;
  const published = run.paths.logDirs.artifacts;
  const manifest: ManifestEntry[] = [
    {
      source: CONVENTION_SOURCE,
      destination: `artifacts/${path.relative(dir, published)}`,
      type: 'directory',
      status: existsSync(published) && (await readdir(published)).length ? 'ok' : 'empty',
      service: null,
    },
  ];
  const claimed = new Set([path.relative(dir, published)]);
  for (const artifact of entries.map(normalized)) manifest.push(await collectOne(run, artifact, claimed));
  await appendManifest(path.join(dir, 'manifest.json'), manifest);
}

async function collectOne(run: TrialRun, artifact: Artifact, claimed: Set<string>): Promise<ManifestEntry> {
  const relative = relativeTarget(artifact);
  const target = path.join(run.paths.artifactsDir, relative);
  const entry = { source: artifact.source, destination: `artifacts/${relative}`, service: null };
  const overlaps = [...claimed].some((other) => other === relative || other.startsWith(`${relative}/`) || relative.startsWith(`${other}/`));
  if (overlaps || !relative) return { ...entry, type: 'file', status: 'skipped' };
  claimed.add(relative);
  try {
    await run.env.download(artifact.source, target);
    const directory = (await lstat(target)).isDirectory();
    if (directory) await applyExcludes(target, artifact.exclude);
    return { ...entry, type: directory ? 'directory' : 'file', status: 'ok' };
  } catch (error) {
    await run.recorder.log(`artifact ${artifact.source} not collected: ${(error as Error).message.split('\n')[0]}`);
    return { ...entry, type: path.posix.extname(artifact.source) ? 'file' : 'directory', status: 'failed' };
  }
}

/**
 * Harbor's manifest accumulates over collection passes (and the steps of a multi-step trial). The folder is the
 * trial's to write too: the manifest is read and written without following a link the trial may have put there.
 */
async function appendManifest(file: string, entries: ManifestEntry[]): Promise<void> {
  const previous = await readTrialFile(file).then((text) => (text ? (JSON.parse(text) as ManifestEntry[]) : []), () => []);
  await writeTrialFile(file, `${JSON.stringify([...previous, ...entries], null, 2)}\n`);
}
