import type { JsonObject } from '../json.ts';
import type { Message } from '../message.ts';
import type { RolloutSample } from '../sample.ts';
import type { AtifStep, Trajectory } from './atif-schema.ts';

const ROLES = { system: 'system', user: 'user', agent: 'assistant' } as const;

/** ATIF content as chat content: text as it is, parts as OpenAI's text and image_url parts. */
function chatContent(content: AtifStep['message'] | null | undefined): Message['content'] {
  if (content == null || typeof content === 'string') return content ?? '';
  return content.map((part) => (part.type === 'text' ? { type: 'text', text: part.text ?? '' } : { type: 'image_url', image_url: { url: part.source?.path ?? '' } }));
}

/** The chat messages of one step: its own message, then a tool message per observation result. */
function messagesOfStep(step: AtifStep): Message[] {
  const messages: Message[] = [];
  const calls = step.tool_calls ?? [];
  const isToolOnly = step.source === 'system' && step.message === '' && step.observation;
  if (!isToolOnly) {
    const message: Message = { role: ROLES[step.source], content: chatContent(step.message) };
    if (calls.length) {
      message.tool_calls = calls.map((c) => ({ id: c.tool_call_id, type: 'function' as const, function: { name: c.function_name, arguments: JSON.stringify(c.arguments) } }));
      if (message.content === '') message.content = null;
    }
    if (step.reasoning_content != null) message.reasoning_content = step.reasoning_content;
    messages.push(message);
  }
  for (const result of step.observation?.results ?? []) {
    const callId = result.source_call_id ?? (typeof result.extra?.tool_call_id === 'string' ? result.extra.tool_call_id : undefined);
    const tool: Message = { role: 'tool', content: chatContent(result.content) };
    if (callId !== undefined) tool.tool_call_id = callId;
    if (typeof result.extra?.name === 'string') tool.name = result.extra.name;
    messages.push(tool);
  }
  return messages;
}

/**
 * The sample a grader sees of an ATIF trajectory (a `--load-trajectory` file): the conversation as chat messages
 * (tool calls and their results as OpenAI writes them) and the token totals as the recording clients count them.
 */
export function sampleOfTrajectory(trajectory: Trajectory, source: string): RolloutSample {
  const totals = trajectory.final_metrics ?? {};
  const metrics: Record<string, number> = {};
  for (const [key, name] of [['total_prompt_tokens', 'prompt_tokens'], ['total_completion_tokens', 'completion_tokens'], ['total_cached_tokens', 'cached_tokens']] as const) {
    const value = totals[key];
    if (typeof value === 'number') metrics[name] = value;
  }
  const extraFields: JsonObject = { trajectory: trajectory.trajectory_id ?? trajectory.session_id ?? null };
  if (trajectory.agent.model_name != null) extraFields.model = trajectory.agent.model_name;
  return { source, messages: trajectory.steps.flatMap(messagesOfStep), metrics, extraFields };
}
