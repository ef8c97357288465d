import type { RolloutContext } from '../../runtime/rollout-context.ts';

/** Where the model is and how to authenticate; every option falls back to the rollout context, then the env. */
export interface EndpointOptions {
  /** A base URL (`.../v1`) or the full chat completions URL. */
  baseURL?: string;
  apiKey?: string;
}

/** Servers that need no key (vLLM, the scripted server) still get a non-empty one, as SDKs require it. */
const NO_KEY = 'rollout-test-no-key';
/** Replay never opens a connection, so a replay-only run needs no endpoint. */
const REPLAY_ONLY = 'http://model-cache-replay.invalid/v1';

/** `.../v1/chat/completions` → `.../v1`: the rollout setting may be either form, SDKs want the base. */
export function baseUrlOf(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/chat\/completions$/, '');
}

/** Resolves the endpoint of an integration; without one (and not replaying) it fails with what to set. */
export function resolveEndpoint(rollout: RolloutContext | undefined, options: EndpointOptions): { baseURL: string; apiKey: string } {
  const url = options.baseURL ?? rollout?.chatCompletionsUrl ?? process.env.ROLLOUT_CHAT_COMPLETIONS_URL;
  const apiKey = options.apiKey ?? rollout?.apiKey ?? process.env.ROLLOUT_API_KEY ?? NO_KEY;
  if (url) return { baseURL: baseUrlOf(url), apiKey };
  if (rollout?.modelCache?.mode === 'replay') return { baseURL: REPLAY_ONLY, apiKey };
  throw new Error(
    'no model endpoint: set ROLLOUT_CHAT_COMPLETIONS_URL (or the run\'s model endpoint), or pass baseURL to the client',
  );
}
