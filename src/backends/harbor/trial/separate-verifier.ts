import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TrialEnvironment } from '../environments/environment.ts';
import { SandboxEnvironment } from '../environments/sandbox-environment.ts';
import type { ArtifactEntry } from '../task/task-config.ts';
import { artifactHostPath } from './artifacts.ts';
import { createTaskEnvironment } from './environment-init.ts';
import type { SeparateVerifier } from './phases.ts';
import { TrialError } from './trial-error.ts';
import type { TrialRun } from './trial-run.ts';

/**
 * Harbor's separate verifier (`environment_mode = "separate"`): a fresh container of the verifier's image
 * (built from `tests/Dockerfile`, or its `docker_image`), which holds `/tests` itself. Only `/logs/verifier` is
 * shared with the trial; the collected artifacts are copied in, each back to its source path (what the
 * agent published to `/logs/artifacts`), so nothing else of the agent's container reaches the verifier.
 * The container is removed afterwards. In the sandbox, the same on the verifier image's root filesystem; the
 * host-root fallback has no image (nor its `/tests`), so there it is an error saying why.
 */
export async function runSeparateVerifier<T>(
  run: TrialRun,
  separate: SeparateVerifier,
  artifacts: ArtifactEntry[],
  verify: (env: TrialEnvironment) => Promise<T>,
): Promise<T> {
  const env = createTaskEnvironment(run.config.environment, separate.environment, {
    trialDir: run.paths.dir,
    logDirs: { verifier: run.paths.verifierDir },
    sharedPaths: run.launch.sharedPaths,
    taskName: `${run.task.name}-verifier`,
    buildContext: separate.buildContext,
    uploadPaths: artifactTargets(artifacts).map(([, inside]) => path.posix.dirname(inside)).concat(CONVENTION_DIR),
  });
  try {
    await env.start(run.signal);
    if (env instanceof SandboxEnvironment && !env.onImageRoot) {
      throw TrialError.of('ValueError', 'VALIDATION_ERROR', 'grader', `environment_mode = "separate" needs the verifier's image, and ${env.notes.join('; ')}`);
    }
    await uploadArtifacts(run, env, artifacts);
    await env.exec(['chmod', '+x', path.posix.join(env.paths.tests, 'test.sh')], { user: 0 });
    return await verify(env);
  } catch (error) {
    throw error instanceof TrialError ? error : TrialError.of('VerifierError', 'AGENT_ERROR', 'grader', error);
  } finally {
    await env.stop().catch((error: Error) => run.recorder.log(`verifier environment stop failed: ${error.message}`));
  }
}

/** Where the agent's published artifacts appear for the verifier. */
const CONVENTION_DIR = '/logs/artifacts';

/** Each configured artifact: [host path collected to, its source path inside]. */
function artifactTargets(artifacts: ArtifactEntry[], artifactsDir = ''): Array<[host: string, inside: string]> {
  return artifacts.map((entry) => [artifactHostPath(artifactsDir, entry), typeof entry === 'string' ? entry : entry.source]);
}

/** Each collected artifact back at its source path; the published folder at `/logs/artifacts`. */
async function uploadArtifacts(run: TrialRun, env: TrialEnvironment, artifacts: ArtifactEntry[]): Promise<void> {
  const entries: Array<[host: string, inside: string]> = [[run.paths.logDirs.artifacts, CONVENTION_DIR], ...artifactTargets(artifacts, run.paths.artifactsDir)];
  for (const [host, inside] of entries) {
    if (!existsSync(host)) continue;
    await env.exec(['mkdir', '-p', path.posix.dirname(inside)], { user: 0 });
    await env.upload(host, inside);
  }
}
