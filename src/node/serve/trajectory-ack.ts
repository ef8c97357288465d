import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ControllerReportSchema, foldControllerReport, type Trajectory, trajectoryJson, trajectoryOfSamples } from '../../model/atif/index.ts';
import type { RolloutSample } from '../../model/sample.ts';
import { packageVersion } from '../../package-files.ts';
import { TRAJECTORIES_DIR, trajectoryFileName } from '../output/trajectory-files.ts';

/**
 * The served rollouts' ATIF trajectories, `<outputDir>/serve/trajectories/<rollout-id>.json`: written when a
 * workflow ends, and folded with the per-call metrics a controller may send back in its answer to a callback
 * (`{"trajectory": {...}}`, osmosis's `TrajectoryReport`). A failure is logged and loses that file only.
 *
 * The files are written synchronously, as the journal's lines are: an asynchronous write is four trips through
 * libuv's thread pool (mkdir, open, write, close), and when a trainer posts rollouts one at a time (osmosis's
 * driver does) each trip wakes a sleeping pool thread, which cost serve more CPU than the rest of a no-op
 * rollout; the three system calls of a small file cost a few microseconds.
 */
export class ServeTrajectories {
  readonly #dir: string;
  /** Whether the directory was made (once, not per file). */
  #made = false;

  constructor(
    serveDir: string,
    /** The agent's name (its workflow's) by suite. */
    private readonly agents: Map<string, string>,
    private readonly log: (line: string) => void,
  ) {
    this.#dir = path.join(serveDir, TRAJECTORIES_DIR);
  }

  /** Writes the trajectory of a rollout whose workflow ended, if its samples hold a conversation. */
  written(suite: string, id: string, samples: RolloutSample[]): void {
    const agent = { name: this.agents.get(suite) ?? suite, version: `rollout-test ${packageVersion()}` };
    const trajectory = trajectoryOfSamples(samples, { rolloutId: id, agent, extra: { suite } });
    if (trajectory) this.#guarded(id, () => this.#write(id, trajectory));
  }

  /** Folds the report in a controller's answer to a callback (its JSON object) into the rollout's trajectory. */
  acknowledged(id: string, kind: string, ack: Record<string, unknown>): void {
    const report = reportIn(ack);
    if (report === undefined) return;
    if (!report.success) {
      this.log(`ignoring the malformed trajectory report in the answer to the ${kind} callback of rollout ${id}: ${report.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      return;
    }
    this.#guarded(id, () => {
      const trajectory = this.#read(id);
      if (trajectory) this.#write(id, foldControllerReport(trajectory, report.data));
    });
  }

  #file(id: string): string {
    return path.join(this.#dir, trajectoryFileName(id));
  }

  #write(id: string, trajectory: Trajectory): void {
    const text = trajectoryJson(trajectory);
    if (!this.#made) this.#make();
    try {
      writeFileSync(this.#file(id), text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The directory was removed while serving: made again.
      this.#make();
      writeFileSync(this.#file(id), text);
    }
  }

  #make(): void {
    mkdirSync(this.#dir, { recursive: true });
    this.#made = true;
  }

  #read(id: string): Trajectory | undefined {
    try {
      return JSON.parse(readFileSync(this.#file(id), 'utf8')) as Trajectory;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  #guarded(id: string, work: () => void): void {
    try {
      work();
    } catch (error) {
      this.log(`the trajectory of rollout ${id} was not written: ${(error as Error).message}`);
    }
  }
}

/** The `trajectory` of a callback's answer, checked; undefined when the answer has none. */
function reportIn(ack: Record<string, unknown>) {
  return ack.trajectory == null ? undefined : ControllerReportSchema.safeParse(ack.trajectory);
}
