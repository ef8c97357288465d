import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ModelCacheSettings, resolveModelCache } from '../src/public/index.ts';
import type { LocalBackendOptions } from '../src/public/node.ts';
import { calculatorScript, startModelServer } from '../src/public/testing.ts';
import { AgentsSdkCalculatorWorkflow } from '../rollouts/agents/agents-sdk-calculator-agent.ts';
import { CalculatorAgentWorkflow } from '../rollouts/agents/calculator-agent.ts';
import { agentRef, row, runRollouts } from './helpers/model-rollouts.ts';

const cacheDir = () => mkdtempSync(path.join(os.tmpdir(), 'model-cache-'));
/** Two runs of one row, as the CLI names them, and another row. */
const REQUESTS = [row('calc-0-run0', 'Compute 2+3 and 4*5.'), row('calc-0-run1', 'Compute 2+3 and 4*5.'), row('calc-1-run0', 'What is 9-4?')];

const setups: Array<[string, Omit<LocalBackendOptions<any, any>, 'modelCache'>]> = [
  ['the OpenAI client inline, streaming', { workflow: CalculatorAgentWorkflow, workflowConfig: { stream: true, tokenData: true } }],
  ['the AI SDK in the worker pool', { workflow: agentRef('ai-sdk-calculator-agent.ts', 'AiSdkCalculatorWorkflow'), mode: 'pool', threads: 1 }],
  ['the Agents SDK inline', { workflow: AgentsSdkCalculatorWorkflow }],
];

async function samplesOf(options: LocalBackendOptions<any, any>) {
  const outcomes = await runRollouts(options, REQUESTS);
  for (const { workflow } of outcomes) expect(workflow.error).toBeUndefined();
  return outcomes.map((o) => o.workflow.samples);
}

describe('model-call cache', () => {
  it.each(setups)('replays %s with the server stopped, giving identical samples', async (_, options) => {
    const server = await startModelServer({ script: calculatorScript });
    const record: ModelCacheSettings = { mode: 'record', dir: cacheDir() };
    const recorded = await samplesOf({ ...options, chatCompletionsUrl: server.url, modelCache: record });
    const calls = server.requests.count;
    await server.close();
    expect(calls).toBe(3 + 3 + 2);
    expect(readdirSync(record.dir).filter((f) => f.endsWith('.json'))).toHaveLength(calls);
    const replayed = await samplesOf({ ...options, chatCompletionsUrl: server.url, modelCache: { mode: 'replay', dir: record.dir } });
    expect(replayed).toEqual(recorded);
  });

  it('fails a replay miss clearly, naming the call, without any endpoint', async () => {
    const [outcome] = await runRollouts({ workflow: CalculatorAgentWorkflow, modelCache: { mode: 'replay', dir: cacheDir() } }, [
      row('never-recorded', 'Compute 1+1, please, and explain every single step of the computation in great detail.'),
    ]);
    expect(outcome!.workflow.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'workflow' });
    expect(outcome!.workflow.error!.message).toMatch(
      /^model cache replay miss: model call #0 of rollout "never-recorded" \(model scripted, last user message "Compute 1\+1, please, .{40,}…"\) has no entry [0-9a-f]{64} in /,
    );
  });
});

describe('resolveModelCache (for --model-cache)', () => {
  it('is off without the flag, and stores under the output directory by default', () => {
    expect(resolveModelCache(undefined, { outputDir: '.rollouts' })).toBeUndefined();
    expect(resolveModelCache('replay', { outputDir: '.rollouts', cwd: '/repo' })).toEqual({ mode: 'replay', dir: '/repo/.rollouts/model-cache' });
    expect(resolveModelCache('record', { outputDir: 'out', dir: 'cache', cwd: '/repo' })).toEqual({ mode: 'record', dir: '/repo/cache' });
  });

  it('rejects other modes with what to write', () => {
    expect(() => resolveModelCache('on', { outputDir: '.rollouts' })).toThrow('--model-cache must be "record" or "replay", got "on"');
  });
});
