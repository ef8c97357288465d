import path from 'node:path';

/** Harbor's trial directory layout: `trialsDir/<trial-name>/{agent,verifier,artifacts}/` and its files. */
export class TrialPaths {
  constructor(readonly dir: string) {}

  get agentDir(): string {
    return path.join(this.dir, 'agent');
  }
  get verifierDir(): string {
    return path.join(this.dir, 'verifier');
  }
  get artifactsDir(): string {
    return path.join(this.dir, 'artifacts');
  }
  get configFile(): string {
    return path.join(this.dir, 'config.json');
  }
  get resultFile(): string {
    return path.join(this.dir, 'result.json');
  }
  get exceptionFile(): string {
    return path.join(this.dir, 'exception.txt');
  }
  get logFile(): string {
    return path.join(this.dir, 'trial.log');
  }
}

/** The directory of a trial: `trialsDir/<trial-name>`. */
export function trialDirOf(config: { trialsDir: string; trialName: string }): string {
  return path.join(config.trialsDir, config.trialName);
}
