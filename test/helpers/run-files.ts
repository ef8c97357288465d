import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The rollout lines of a run's journal so far (none while it does not exist yet). */
export function journalRollouts(dir: string, outputDir = '.rollouts'): Array<{ id: string; status: string; row: number }> {
  try {
    const lines = readFileSync(path.join(dir, outputDir, 'runs', 'latest', 'journal.jsonl'), 'utf8').trim().split('\n');
    return lines.map((l) => JSON.parse(l)).filter((e) => e.type === 'rollout');
  } catch {
    return [];
  }
}

/** Resolves once `condition` holds (polled: the tests wait for events, never for a fixed time). */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 50));
}
