import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest's order, but the unit project's files go ahead of the end-to-end ones of their group. Vitest runs a group's
 * projects one after the other, by name: the unit files, whose simulations are the suite's heaviest pure CPU, ran
 * last, on one or two forks while the others stood idle (the last 15 s of a 397 s run). Ahead, they overlap the
 * end-to-end files' waits. They stay together: Vitest reuses a fork only for the next file of the same
 * non-isolated project. With a sequencer of its own, Vitest's `--sequence.shuffle` shuffles the tests inside each
 * file but no longer the files.
 */
export default class UnitsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => spec.project.config.sequence.groupOrder * 2 + (spec.project.name === 'unit' ? 0 : 1);
    // Stable: each project keeps Vitest's order (failed first, then longest first).
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
