import { GLOBAL_DISPATCHER, type Transport } from './transport.ts';

let loading: Promise<Transport> | undefined;
let pool: Transport | undefined;

/**
 * The transport of model calls when the SDK was given no `fetch`: this thread's pool of kept-alive connections
 * (`connection-pool.ts`), loaded on the first call, as most processes that import this module never call a model;
 * once loaded, a call goes to it directly. The global dispatcher is read before undici is loaded, which installs
 * one when none is set.
 */
export const poolTransport: Transport = async (url, init) => {
  if (pool) return pool(url, init);
  if (!loading) {
    const preset: unknown = (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER];
    loading = import('./connection-pool.ts').then((loaded) => (pool = loaded.poolSender(preset)));
  }
  return (await loading)(url, init);
};
