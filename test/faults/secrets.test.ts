import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { makeProject, runCli } from '../helpers/project.ts';

const SECRET = 's3cret-token';

const ROLLOUT = `
import { AgentWorkflow, defineRollout } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
export class CallModel extends AgentWorkflow {
  async run(ctx) {
    ctx.logger.info('calling ' + process.env.ROLLOUT_CHAT_COMPLETIONS_URL);
    await createRecordingClient().chat.completions.create({ model: 'm', messages: ctx.prompt });
  }
}
defineRollout({ name: 'env url', dataset: [{ prompt: 'hi' }], workflow: CallModel });
defineRollout({ name: 'config url', dataset: [{ prompt: 'hi' }], workflow: CallModel, model: { url: 'https://bob:${SECRET}@127.0.0.1:9/v1' } });
`;

/** Every file the run wrote, by name. */
function writtenFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(full);
      else if (entry.isFile() && !full.endsWith('.rollout.js')) files[path.relative(dir, full)] = readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return files;
}

describe('credentials in URLs', () => {
  test('are hidden in console lines, the journal, the samples and every report', async () => {
    const dir = makeProject({ 'secret.rollout.js': ROLLOUT });
    const url = `http://alice:${SECRET}@127.0.0.1:9/v1/chat/completions`;
    const args = ['run', '--reporter', 'verbose', '--reporter', 'json', '--outputFile.json', 'report.json', '--reporter', 'junit', '--outputFile.junit', 'junit.xml'];
    const run = await runCli(dir, args, { env: { ROLLOUT_CHAT_COMPLETIONS_URL: url } });
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(run.all).toContain('http://***@127.0.0.1:9/v1/chat/completions');
    expect(run.all).toContain('https://***@127.0.0.1:9/v1');
    expect(run.all).not.toContain(SECRET);
    const files = writtenFiles(dir);
    const names = Object.keys(files);
    expect(names).toEqual(expect.arrayContaining(['report.json', 'junit.xml']));
    // The run's own folder in the history holds its journal, samples and summary.
    for (const output of ['journal.jsonl', 'samples.jsonl', 'summary.json']) expect(names.some((n) => new RegExp(`^\\.rollouts/runs/[^/]+/${output}$`).test(n)), output).toBe(true);
    for (const [name, content] of Object.entries(files)) expect(content, name).not.toContain(SECRET);
    expect(files['report.json']).toContain('***@127.0.0.1');
  });
});
