import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ControllerReportSchema, foldControllerReport, type Trajectory, trajectoryJson, trajectoryOfSamples } from '../../model/atif/index.ts';
import type { RolloutSample } from '../../model/sample.ts';
import { packageVersion } from '../../package-files.ts';
import { TRAJECTORIES_DIR, trajectoryFileName } from '../output/trajectory-files.ts';

/**
 * The served rollouts' ATIF trajectories, `<outputDir>/serve/trajectories/<rollout-id>.json`: written when a
 * workflow ends, and folded with the per-call metrics a controller may send back in its answer to a callback
 * (`{"trajectory": {...}}`, osmosis's `TrajectoryReport`). The work on one rollout's file runs in order; a
 * failure is logged and loses that file only.
 */
export class ServeTrajectories {
  readonly #chains = new Map<string, Promise<void>>();
  readonly #dir: string;

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
    if (trajectory) this.#then(id, () => this.#write(id, trajectory));
  }

  /** Folds the report in a controller's answer to a callback (its JSON object) into the rollout's trajectory. */
  acknowledged(id: string, kind: string, ack: Record<string, unknown>): void {
    const report = reportIn(ack);
    if (report === undefined) return;
    if (!report.success) {
      this.log(`ignoring the malformed trajectory report in the answer to the ${kind} callback of rollout ${id}: ${report.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      return;
    }
    this.#then(id, async () => {
      const trajectory = await this.#read(id);
      if (trajectory) await this.#write(id, foldControllerReport(trajectory, report.data));
    });
  }

  /** Resolves once every file handed over so far is written. */
  async idle(): Promise<void> {
    while (this.#chains.size) await Promise.all(this.#chains.values());
  }

  #file(id: string): string {
    return path.join(this.#dir, trajectoryFileName(id));
  }

  async #write(id: string, trajectory: Trajectory): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    await writeFile(this.#file(id), trajectoryJson(trajectory));
  }

  async #read(id: string): Promise<Trajectory | undefined> {
    try {
      return JSON.parse(await readFile(this.#file(id), 'utf8')) as Trajectory;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  #then(id: string, work: () => Promise<void>): void {
    const next = (this.#chains.get(id) ?? Promise.resolve()).then(work).catch((error: Error) => this.log(`the trajectory of rollout ${id} was not written: ${error.message}`));
    this.#chains.set(id, next);
    void next.finally(() => {
      if (this.#chains.get(id) === next) this.#chains.delete(id);
    });
  }
}

/** The `trajectory` of a callback's answer, checked; undefined when the answer has none. */
function reportIn(ack: Record<string, unknown>) {
  return ack.trajectory == null ? undefined : ControllerReportSchema.safeParse(ack.trajectory);
}
