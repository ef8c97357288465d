import * as z from 'zod';
import type { JsonObject } from '../../model/json.ts';
import { type Message, MessageSchema } from '../../model/message.ts';
import { ValidationError } from '../../runtime/errors.ts';

/** A row ready to become a request. */
export interface NormalizedRow {
  id: string | undefined;
  prompt: Message[];
  label: string | null;
  /** The row's label was an object or array, which the label (text, as in the osmosis protocol) holds as JSON. */
  labelFromJson: boolean;
  metadata: JsonObject | null;
}

const KNOWN = new Set(['id', 'prompt', 'system_prompt', 'user_prompt', 'label', 'ground_truth', 'metadata']);

function promptOf(row: Record<string, unknown>): Message[] {
  if (typeof row.prompt === 'string') return [{ role: 'user', content: row.prompt }];
  if (Array.isArray(row.prompt)) {
    const parsed = z.array(MessageSchema).safeParse(row.prompt);
    if (!parsed.success) throw new ValidationError(`"prompt" is not a list of chat messages:\n${z.prettifyError(parsed.error)}`);
    return parsed.data;
  }
  if (typeof row.user_prompt === 'string') {
    const system: Message[] = typeof row.system_prompt === 'string' && row.system_prompt ? [{ role: 'system', content: row.system_prompt }] : [];
    return [...system, { role: 'user', content: row.user_prompt }];
  }
  throw new ValidationError('row has no prompt: give "prompt" (text or messages), or "user_prompt" with an optional "system_prompt"');
}

/** The label as text: a number or boolean as written, an object or array as JSON (see `labelFromJson`). */
function labelOf(row: Record<string, unknown>): Pick<NormalizedRow, 'label' | 'labelFromJson'> {
  const label = row.label ?? row.ground_truth;
  if (label === undefined || label === null || label === '') return { label: null, labelFromJson: false };
  if (typeof label === 'object') return { label: JSON.stringify(label), labelFromJson: true };
  return { label: String(label), labelFromJson: false };
}

/** Metadata may be an object, or JSON text (CSV); other unknown columns join it, so graders can see them. */
function metadataOf(row: Record<string, unknown>): JsonObject | null {
  let metadata: unknown = row.metadata;
  if (typeof metadata === 'string' && metadata.trim()) {
    try {
      metadata = JSON.parse(metadata);
    } catch {
      throw new ValidationError('"metadata" is text but not valid JSON');
    }
  }
  // Stryker disable next-line ConditionalExpression: null passes the last test anyway (typeof null is 'object')
  if (metadata !== undefined && metadata !== null && metadata !== '' && (typeof metadata !== 'object' || Array.isArray(metadata))) {
    throw new ValidationError('"metadata" must be an object');
  }
  // Most rows have neither metadata nor other columns: no object is made for them.
  // Stryker disable next-line all: a shortcut; without it the lines below merge nothing and give null as well
  if ((metadata === undefined || metadata === null || metadata === '') && Object.keys(row).every((key) => KNOWN.has(key))) return null;
  const extra = Object.fromEntries(Object.entries(row).filter(([key]) => !KNOWN.has(key)));
  const merged = { ...extra, ...(metadata as object | null | undefined) };
  return Object.keys(merged).length ? (merged as JsonObject) : null;
}

/** Turns a dataset row into prompt, label and metadata; throws a ValidationError saying what is wrong. */
export function normalizeRow(value: unknown): NormalizedRow {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(`row must be an object, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`);
  }
  const row = value as Record<string, unknown>;
  const id = row.id === undefined || row.id === null ? undefined : String(row.id);
  return { id, prompt: promptOf(row), ...labelOf(row), metadata: metadataOf(row) };
}
