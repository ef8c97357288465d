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
