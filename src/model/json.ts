import * as z from 'zod';
import { isFiniteJson } from './sample-check.ts';

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
 * Why a value kept as it was given (a message's extra key, a content part) could not be written to a report, or
 * `undefined` when it can: JSON values, and what JSON writes by its own rules and a thread can clone (a Date or a URL
 * as text, an SDK's bytes). A function, a symbol, a BigInt, NaN or Infinity anywhere in it cannot be written, a Map
 * or a Set would be written empty, and a value that cannot be cloned could not reach the main thread.
 */
export function whyNotWritable(value: unknown): string | undefined {
  let refused: string | undefined;
  try {
    // Plain JSON (the common case) without a walk of JSON.stringify's and a clone.
    if (isFiniteJson(value)) return undefined;
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

/** A zod check that a value a schema keeps as it was given (a content part) is one a report can write. */
export function writable(value: unknown, ctx: z.RefinementCtx): void {
  const why = whyNotWritable(value);
  if (why) ctx.addIssue({ code: 'custom', message: why });
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
