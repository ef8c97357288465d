/**
 * `rollout-test/testing`: a scripted OpenAI-compatible model server on loopback, for tests and CI runs that
 * must not call a real model.
 * @packageDocumentation
 */

export {
  startModelServer,
  startModelServerFromSpec,
  echoScript,
  calculatorScript,
  withFaultDirectives,
  type ModelServer,
  type ModelServerOptions,
  type LoggedRequest,
  type ModelScript,
  type ScriptRequest,
  type ScriptReply,
  type ScriptToolCall,
  type ScriptFailure,
  type ChatMessage,
  type ToolDefinition,
} from '../testing/model-server/index.ts';
