import * as z from 'zod';

/** A tool call requested by the assistant, in the OpenAI Chat Completions shape. */
export const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** An OpenAI-style chat message. Extra keys (e.g. `reasoning_content`) are kept. */
export const MessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]),
  tool_calls: z.array(ToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});

export type ToolCall = z.infer<typeof ToolCallSchema>;
export type Message = z.infer<typeof MessageSchema>;
