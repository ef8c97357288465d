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
function isWritableJson(value: unknown): boolean {
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
 * Why a value kept as it was given (a message's extra key, a content part) could not be written to a report, or
 * `undefined` when it can: JSON values, and what JSON writes by its own rules and a thread can clone (a Date or a URL
 * as text, an SDK's bytes). A function, a symbol, a BigInt, NaN or Infinity anywhere in it cannot be written, a Map
 * or a Set would be written empty, and a value that cannot be cloned could not reach the main thread.
 */
export function whyNotWritable(value: unknown): string | undefined {
  let refused: string | undefined;
  try {
    if (isWritableJson(value)) return undefined;
    JSON.stringify(value, (_, v: unknown) => {
      if (typeof v === 'bigint') refused ??= 'a BigInt';
      else if (typeof v === 'function' || typeof v === 'symbol') refused ??= `a ${typeof v}`;
      else if (typeof v === 'number' && !Number.isFinite(v)) refused ??= `${v}`;
      // JSON writes either as {}: its entries would be lost without a word.
      else if (v instanceof Map || v instanceof Set) refused ??= `a ${v.constructor.name} (JSON writes it as {})`;
      // Bytes (an SDK's image) are numbers: not walked one by one, which takes seconds for a few MB.
      if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return null;
      return typeof v === 'bigint' ? undefined : v;
    });
    structuredClone(value);
  } catch (error) {
    // A getter or a proxy that throws, a cycle, a value that cannot be cloned.
    refused ??= `a value that cannot be read or copied (${error instanceof Error ? error.message : String(error)})`;
  }
  return refused && `must be JSON (${refused} cannot be stored in a report)`;
}

/**
 * A zod check that the keys an object schema keeps without naming them (`z.looseObject`) hold values a report can
 * write ({@link whyNotWritable}): kept as they are, a function could not be cloned to the main thread, nor a BigInt
 * written to a report.
 */
export function extraKeysWritable(named: readonly string[]) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    for (const key in value) {
      const why = named.includes(key) || value[key] === undefined ? undefined : whyNotWritable(value[key]);
      if (why) ctx.addIssue({ code: 'custom', path: [key], message: why });
    }
  };
}
