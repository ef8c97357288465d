import path from 'node:path';

/** Harbor's trial directory layout: `trialsDir/<trial-name>/{agent,verifier,artifacts}/` and its files. */
export class TrialPaths {
  readonly agentDir: string;
  readonly verifierDir: string;
  readonly artifactsDir: string;
  readonly configFile: string;
  readonly resultFile: string;
  readonly exceptionFile: string;
  readonly logFile: string;

  constructor(readonly dir: string) {
    const at = (name: string) => path.join(dir, name);
    [this.agentDir, this.verifierDir, this.artifactsDir] = [at('agent'), at('verifier'), at('artifacts')];
    [this.configFile, this.resultFile, this.exceptionFile, this.logFile] = [at('config.json'), at('result.json'), at('exception.txt'), at('trial.log')];
  }
}

/** The directory of a trial: `trialsDir/<trial-name>`. */
export function trialDirOf(config: { trialsDir: string; trialName: string }): string {
  return path.join(config.trialsDir, config.trialName);
}
