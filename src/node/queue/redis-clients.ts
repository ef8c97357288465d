import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * BullMQ and ioredis, required rather than imported: both are CommonJS, and an ES import of them makes Node scan
 * each file they re-export for named exports. Loading them that way cost a queue process (a coordinator, a worker)
 * ~120 ms more of CPU.
 */
export const bullmq = require('bullmq') as typeof import('bullmq');
export const ioredis = require('ioredis') as typeof import('ioredis');
