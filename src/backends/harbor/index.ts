/** What the CLI loads on demand for a harbor suite. */
export { createHarborBackend } from './create-harbor-backend.ts';
export { ORACLE_AGENT } from './harbor-backend.ts';
