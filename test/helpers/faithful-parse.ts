import { isDeepStrictEqual } from 'node:util';
import type * as z from 'zod';

/**
 * Whether the fast schema-free checks (src/model/*-check.ts) may take `value`: `schema` accepts it and returns an
 * equal copy (prototypes and absent-versus-undefined keys count), and it is plain JSON (a JSON round trip gives it
 * back). A value a check leaves to the schema must fail this, or leaving it is only caution, not a rule a test can
 * hold the check to.
 */
export function parsesFaithfully(schema: z.ZodType, value: unknown): boolean {
  const parsed = schema.safeParse(value);
  return parsed.success && isDeepStrictEqual(parsed.data, value) && survivesJson(value);
}

function survivesJson(value: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(JSON.stringify(value)), value);
  } catch {
    return false; // a BigInt
  }
}
