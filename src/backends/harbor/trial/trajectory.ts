import path from 'node:path';
import { trajectoryJson, trajectoryOfSamples } from '../../../model/atif/index.ts';
import type { RolloutSample } from '../../../model/sample.ts';
import { packageVersion } from '../../../package-files.ts';
import { agentInfoName } from './harbor-files.ts';
import { writeTrialFile } from './trial-files.ts';
import type { TrialRun } from './trial-run.ts';

/**
 * `agent/trajectory.json`, where Harbor's ATIF agents leave theirs (a multi-step trial's moves to
 * `steps/<name>/agent/` with the step): the workflow's samples as an ATIF trajectory, named as result.json's
 * `agent_info` names the agent. Written over whatever the trial left at that path, never through it.
 */
export async function writeTrialTrajectory(run: TrialRun, samples: RolloutSample[]): Promise<void> {
  const { request, trialName } = run.config;
  const agent = { name: agentInfoName(run.config), version: packageVersion() };
  const trajectory = trajectoryOfSamples(samples, { rolloutId: request.id, agent, extra: { trial_name: trialName } });
  if (trajectory) await writeTrialFile(path.join(run.paths.agentDir, 'trajectory.json'), trajectoryJson(trajectory));
}
