import type { RolloutContext } from '../../runtime/rollout-context.ts';
import { raisedByRecorder } from './errors.ts';

/** Where the model is and how to authenticate; every option falls back to the rollout context, then the env. */
export interface EndpointOptions {
  /** A base URL (`.../v1`) or the full chat completions URL. */
  baseURL?: string | undefined;
  apiKey?: string | undefined;
}

/** Servers that need no key (vLLM, the scripted server) still get a non-empty one, as SDKs require it. */
const NO_KEY = 'rollout-test-no-key';
/** Replay never opens a connection, so a replay-only run needs no endpoint. */
const REPLAY_ONLY = 'http://model-cache-replay.invalid/v1';

/** `.../v1/chat/completions` → `.../v1`: the rollout setting may be either form, SDKs want the base. */
export function baseUrlOf(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/chat\/completions$/, '');
}

/**
 * Stands for "the endpoint of the rollout that makes the call": a client made outside any rollout (at module
 * scope, before the run sets the endpoint) is aimed at it, and each call is sent to its rollout's endpoint.
 */
export const CURRENT_ROLLOUT_ENDPOINT = 'http://current-rollout-endpoint.invalid/v1';

/**
 * Resolves the endpoint of an integration. Made outside any rollout without an endpoint, a client calls the
 * endpoint of whichever rollout it is used in; inside a rollout without one (and not replaying) it fails
 * with what to set.
 */
export function resolveEndpoint(rollout: RolloutContext | undefined, options: EndpointOptions): { baseURL: string; apiKey: string } {
  const url = options.baseURL ?? rollout?.chatCompletionsUrl ?? process.env.ROLLOUT_CHAT_COMPLETIONS_URL;
  const apiKey = options.apiKey ?? rollout?.apiKey ?? process.env.ROLLOUT_API_KEY ?? NO_KEY;
  if (url) return { baseURL: baseUrlOf(url), apiKey };
  if (rollout?.modelCache?.mode === 'replay') return { baseURL: REPLAY_ONLY, apiKey };
  if (!rollout) return { baseURL: CURRENT_ROLLOUT_ENDPOINT, apiKey };
  throw new Error(
    'no model endpoint: set ROLLOUT_CHAT_COMPLETIONS_URL (or the run\'s model endpoint), or pass baseURL to the client',
  );
}

/** A call of a client made outside any rollout, sent to the endpoint (and with the key) of the rollout making it. */
export function toCurrentEndpoint(url: string, init: RequestInit | undefined, rollout: RolloutContext | undefined): { url: string; init: RequestInit | undefined } {
  if (!url.startsWith(CURRENT_ROLLOUT_ENDPOINT)) return { url, init };
  const endpoint = resolveEndpoint(rollout ?? missingRollout(), {});
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${endpoint.apiKey}`);
  return { url: endpoint.baseURL + url.slice(CURRENT_ROLLOUT_ENDPOINT.length), init: { ...init, headers } };
}

function missingRollout(): never {
  throw raisedByRecorder(
    new Error('no model endpoint: this client was made and used outside any rollout; set ROLLOUT_CHAT_COMPLETIONS_URL or pass baseURL'),
  );
}
