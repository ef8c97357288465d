import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { RolloutSample } from '../../model/sample.ts';
import type { RolloutRecord } from '../run/rollout-record.ts';

/**
 * The files of a run in `outputDir`: `journal.jsonl` (a line per finished rollout, written synchronously as
 * each finishes so that an interrupted run loses nothing), `samples.jsonl`, and `summary.json` at the end.
 */
export class RunOutputs {
  readonly #journal: number;
  readonly #samples: number;

  constructor(readonly outputDir: string) {
    mkdirSync(outputDir, { recursive: true });
    this.#journal = openSync(path.join(outputDir, 'journal.jsonl'), 'w');
    this.#samples = openSync(path.join(outputDir, 'samples.jsonl'), 'w');
    this.journal({ type: 'run-start', startedAt: new Date().toISOString(), pid: process.pid });
  }

  journal(entry: object): void {
    writeSync(this.#journal, `${JSON.stringify(entry)}\n`);
  }

  rollout(record: RolloutRecord, samples: RolloutSample[]): void {
    this.journal({ type: 'rollout', ...record });
    const { id, suite, row, run } = record;
    writeSync(this.#samples, `${JSON.stringify({ id, suite, row, run, samples })}\n`);
  }

  finish(summary: object): void {
    this.journal({ type: 'run-end', endedAt: new Date().toISOString() });
    closeSync(this.#journal);
    closeSync(this.#samples);
    writeFileSync(path.join(this.outputDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  }
}
