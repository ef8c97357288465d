export * from './json.ts';
export * from './message.ts';
export * from './request.ts';
export * from './sample.ts';
export * from './result.ts';
