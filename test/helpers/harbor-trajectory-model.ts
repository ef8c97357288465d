/**
 * Validates trajectory files with Harbor's own pydantic `Trajectory` (`src/harbor/models/trajectories/`), read at
 * test time from upstream, never kept in this project: from a Harbor checkout named by `HARBOR_SRC`, else from a
 * git mirror of Harbor (`HARBOR_GIT_DIR`, by default the machine's `/work/.mirror/wrongbutworks+harbor/repo`).
 * Without either (CI), or without python3 and pydantic 2, the check is skipped and says why.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

const MODELS = 'src/harbor/models/trajectories';
const DEFAULT_GIT_DIR = '/work/.mirror/wrongbutworks+harbor/repo';

export type HarborVerdict = { skipped: string; valid?: undefined; failures?: undefined } | { skipped?: undefined; valid: number; failures: string[] };

/** Upstream's model files by name, or why there are none. */
async function upstreamModels(): Promise<Map<string, string> | string> {
  const checkout = process.env.HARBOR_SRC;
  if (checkout) {
    const dir = path.join(checkout, MODELS);
    if (!existsSync(dir)) return `HARBOR_SRC=${checkout} has no ${MODELS}`;
    return new Map(readdirSync(dir).filter((f) => f.endsWith('.py')).map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]));
  }
  const gitDir = process.env.HARBOR_GIT_DIR ?? DEFAULT_GIT_DIR;
  if (!existsSync(gitDir)) return `Harbor's model files are not available: set HARBOR_SRC to a Harbor checkout (or HARBOR_GIT_DIR to a git mirror of it) to check against upstream's pydantic Trajectory`;
  const git = (...args: string[]) => execa('git', ['--git-dir', gitDir, ...args]).then((r) => r.stdout);
  const names = (await git('ls-tree', '--name-only', `HEAD:${MODELS}`)).split('\n').filter((f) => f.endsWith('.py'));
  const files = new Map<string, string>();
  for (const name of names) files.set(name, await git('show', `HEAD:${MODELS}/${name}`));
  return files;
}

const VALIDATE = `
import json, sys
sys.path.insert(0, sys.argv[1])
from harbor.models.trajectories import Trajectory
failures = []
for file in sys.argv[2:]:
    try:
        Trajectory.model_validate_json(open(file, encoding="utf-8").read())
    except Exception as error:
        failures.append(f"{file}: {error}")
print(json.dumps({"valid": len(sys.argv) - 2 - len(failures), "failures": failures}))
`;

/** Each file validated by upstream's `Trajectory.model_validate_json`. */
export async function harborValidation(files: string[]): Promise<HarborVerdict> {
  const models = await upstreamModels();
  if (typeof models === 'string') return { skipped: models };
  const pydantic = await execa('python3', ['-c', 'import pydantic; assert pydantic.VERSION.startswith("2")'], { reject: false });
  if (pydantic.exitCode !== 0) return { skipped: `python3 with pydantic 2 is needed to run Harbor's model: ${pydantic.stderr || pydantic.message}` };
  // Only the trajectory models, as a package of their own: Harbor's package root imports the whole harness.
  const root = mkdtempSync(path.join(os.tmpdir(), 'harbor-models-'));
  const dir = path.join(root, 'harbor/models/trajectories');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(root, 'harbor/__init__.py'), '');
  writeFileSync(path.join(root, 'harbor/models/__init__.py'), '');
  for (const [name, text] of models) writeFileSync(path.join(dir, name), text);
  const run = await execa('python3', ['-c', VALIDATE, root, ...files]);
  return JSON.parse(run.stdout) as HarborVerdict;
}
