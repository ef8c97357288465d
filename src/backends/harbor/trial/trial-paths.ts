import path from 'node:path';
import type { LogDirs } from '../environments/environment.ts';

/**
 * Harbor's trial directory layout: `trialsDir/<trial-name>/{agent,verifier,artifacts}/`, `config.json`,
 * `lock.json`, `result.json`, `exception.txt`, `trial.log`, and `steps/<name>/` for multi-step tasks.
 */
export class TrialPaths {
  readonly agentDir: string;
  readonly verifierDir: string;
  readonly artifactsDir: string;
  readonly configFile: string;
  readonly lockFile: string;
  readonly resultFile: string;
  readonly exceptionFile: string;
  readonly logFile: string;

  constructor(readonly dir: string) {
    const at = (name: string) => path.join(dir, name);
    [this.agentDir, this.verifierDir, this.artifactsDir] = [at('agent'), at('verifier'), at('artifacts')];
    [this.configFile, this.lockFile, this.resultFile] = [at('config.json'), at('lock.json'), at('result.json')];
    [this.exceptionFile, this.logFile] = [at('exception.txt'), at('trial.log')];
  }

  /**
   * The host folders behind `/logs/*`. As in Harbor, `/logs/artifacts` is `artifacts/logs/artifacts`, the
   * place its path mirrors to, so nothing the agent publishes can shadow another artifact or the manifest.
   */
  get logDirs(): LogDirs {
    return { agent: this.agentDir, verifier: this.verifierDir, artifacts: path.join(this.artifactsDir, 'logs', 'artifacts') };
  }

  /** `steps/<name>/`, where a step's agent, verifier and artifacts folders are archived once it has run. */
  stepDir(name: string): string {
    return path.join(this.dir, 'steps', name);
  }
}

/** The directory of a trial: `trialsDir/<trial-name>`. */
export function trialDirOf(config: { trialsDir: string; trialName: string }): string {
  return path.join(config.trialsDir, config.trialName);
}
