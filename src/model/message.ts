import * as z from 'zod';
import { extraKeysWritable, FiniteJsonSchema, writable } from './json.ts';

/** A tool call requested by the assistant, in the OpenAI Chat Completions shape. Extra keys are kept. */
export const ToolCallSchema = z
  .looseObject({
    id: z.string(),
    type: z.literal('function'),
    function: z.looseObject({ name: z.string(), arguments: z.string() }).superRefine(extraKeysWritable(['name', 'arguments'])),
  })
  .superRefine(extraKeysWritable(['id', 'type', 'function']));

/**
 * A chat message as an OpenAI-compatible chat API accepts it, kept as given: `content` may be absent (an
 * assistant turn of tool calls only), `null`, text, a list of parts, or an object; `function` is the legacy role
 * of a tool result; the optional keys may be `null`, as an SDK's message object dumps them; extra keys (e.g.
 * `reasoning_content`, `function_call`, `refusal`) are kept.
 */
export const MessageSchema = z
  .looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
    content: z.union([z.string(), z.array(z.unknown().superRefine(writable)), z.record(z.string(), FiniteJsonSchema), z.null()]).optional(),
    tool_calls: z.array(ToolCallSchema).nullable().optional(),
    tool_call_id: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
  })
  .superRefine(extraKeysWritable(['role', 'content', 'tool_calls', 'tool_call_id', 'name']));

export type ToolCall = z.infer<typeof ToolCallSchema>;
export type Message = z.infer<typeof MessageSchema>;
