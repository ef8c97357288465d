import type * as z from 'zod';

/** The parts of a zod schema's definition that say which keys a table may hold. */
interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  element?: z.ZodType;
}

const defOf = (schema: z.ZodType): SchemaDef => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** The schema that reads `value`, with its wrappers (optional, default, a transform's input) taken off. */
function unwrap(schema: z.ZodType, value: unknown): z.ZodType {
  for (;;) {
    const def = defOf(schema);
    const inner = def.innerType ?? def.in ?? (def.type === 'union' ? def.options!.find((option) => matches(option, value)) : undefined);
    if (!inner) return schema;
    schema = inner;
  }
}

/** A union's option that can read `value`: a table for a table, a list for a list. */
function matches(option: z.ZodType, value: unknown): boolean {
  const type = defOf(unwrap(option, undefined)).type;
  return Array.isArray(value) ? type === 'array' : typeof value === 'object' && value !== null ? type === 'object' : false;
}

/**
 * The dotted paths of the keys of `value` (task.toml as written) that `schema` does not name, at any depth: such a
 * key is read by no one, so a trial runs as if it were absent. Tables typed as free-form maps (`metadata`, `env`)
 * hold any key. A list's entries are named by their `name` where they have one (`steps."check".agent`).
 */
export function unknownKeys(schema: z.ZodType, value: unknown, at = ''): string[] {
  const def = defOf(unwrap(schema, value));
  if (def.type === 'array' && Array.isArray(value)) {
    return value.flatMap((entry, index) => unknownKeys(def.element!, entry, `${at}${entryName(entry, index)}`));
  }
  if (def.type !== 'object' || typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, inner]) => {
    const path = at ? `${at}.${key}` : key;
    const known = def.shape![key];
    return known ? unknownKeys(known, inner, path) : [path];
  });
}

function entryName(entry: unknown, index: number): string {
  const name = (entry as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? `."${name}"` : `[${index}]`;
}
