/** What every integration shares: the recording transport, the endpoint, the model cache and their errors. */
export { createRecordingFetch, recordingOptionsOf, type RecordingFetchOptions } from './recording-fetch.ts';
export { resolveEndpoint, type EndpointOptions } from './endpoint.ts';
export { ModelConnectionError, ModelCacheMissError, unwrapRecorderError } from './errors.ts';
export { resolveModelCache, MODEL_CACHE_DIR } from './model-cache-settings.ts';
export type { CacheEntry } from './model-cache.ts';
