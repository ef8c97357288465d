import * as z from 'zod';

/**
 * A JSON value whose numbers are all finite: NaN and Infinity cannot be written to a report, so they are
 * rejected wherever user data crosses a boundary.
 */
export type FiniteJson = string | number | boolean | null | FiniteJson[] | { [key: string]: FiniteJson };

export const FiniteJsonSchema: z.ZodType<FiniteJson> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(FiniteJsonSchema),
    z.record(z.string(), FiniteJsonSchema),
  ]),
);

export const JsonObjectSchema = z.record(z.string(), FiniteJsonSchema);
export type JsonObject = z.infer<typeof JsonObjectSchema>;

/** Finite numbers by name: metrics and reward components. */
export const NumberRecordSchema = z.record(z.string(), z.number());

/**
 * Whether `value` can be written as JSON as it is, and cloned to the main thread: finite numbers, strings, booleans,
 * null, arrays of those, and plain objects of those whose keys may also be `undefined` (JSON leaves them out, as
 * from an SDK's optional field). No function, symbol, BigInt, class instance or hole.
 */
export function isWritableJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isWritableJson(value[i])) return false;
    return true;
  }
  if (typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value).every((v) => v === undefined || isWritableJson(v));
}

/**
 * A zod check that the keys an object schema keeps without naming them (`z.looseObject`) hold {@link isWritableJson}
 * values: kept as they are, a function could not be cloned to the main thread, nor a BigInt written to a report.
 */
export function extraKeysWritable(named: readonly string[]) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    for (const key in value) {
      if (named.includes(key) || value[key] === undefined || isWritableJson(value[key])) continue;
      ctx.addIssue({ code: 'custom', path: [key], message: `must be JSON (a ${describe(value[key])} cannot be stored in a report)` });
    }
  };
}

function describe(value: unknown): string {
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'list holding a value that is not JSON' : `${value.constructor?.name ?? 'object'} object, or one holding a value that is not JSON`;
  return typeof value === 'bigint' ? 'BigInt' : typeof value === 'number' ? 'non-finite number' : typeof value;
}
