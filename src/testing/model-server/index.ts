/** A scripted OpenAI-compatible model server, for offline tests and examples. */
export { startModelServer, type ModelServer, type ModelServerOptions, type LoggedRequest } from './server.ts';
export { startModelServerFromSpec } from './from-spec.ts';
export { echoScript, calculatorScript, withFaultDirectives } from './scripts.ts';
export type { ModelScript, ScriptRequest, ScriptReply, ScriptToolCall, ScriptFailure, ChatMessage, ToolDefinition } from './types.ts';
