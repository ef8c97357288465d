import path from 'node:path';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ModelServer } from '../../testing/model-server/server.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';

/** The `"module:export"` script a suite's scripted model runs, with the directory it resolves from: its own, else the config's. */
export function modelScript(suite: RolloutSuite<any, any>, file: string, config: ResolvedConfig): { spec: string; cwd: string } | undefined {
  if (suite.model?.script) return { spec: suite.model.script, cwd: path.dirname(file) };
  return config.model?.script ? { spec: config.model.script, cwd: config.root } : undefined;
}

/**
 * The model endpoint of each suite: its own `model.url`, the config's, or `ROLLOUT_CHAT_COMPLETIONS_URL`;
 * when none is set and a script is named, a scripted model server on loopback, started once per script for
 * the run. In replay mode no server starts: replayed calls never reach one.
 */
export class ModelEndpoints {
  readonly #servers = new Map<string, Promise<ModelServer>>();

  constructor(private readonly config: ResolvedConfig) {}

  async urlFor(suite: RolloutSuite<any, any>, file: string): Promise<string | undefined> {
    const user = this.config.model;
    const url = suite.model?.url ?? user?.url ?? process.env.ROLLOUT_CHAT_COMPLETIONS_URL;
    if (url || this.config.modelCache === 'replay') return url;
    const script = modelScript(suite, file, this.config);
    if (!script) return undefined;
    const key = `${script.cwd}\0${script.spec}`;
    let server = this.#servers.get(key);
    if (!server) {
      server = import('../../testing/model-server/from-spec.ts').then(({ startModelServerFromSpec }) =>
        startModelServerFromSpec(script.spec, script.cwd),
      );
      this.#servers.set(key, server);
    }
    return (await server).chatCompletionsUrl;
  }

  async close(): Promise<void> {
    const servers = await Promise.allSettled(this.#servers.values());
    await Promise.all(servers.map((s) => (s.status === 'fulfilled' ? s.value.close() : undefined)));
  }
}
