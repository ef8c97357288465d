import * as z from 'zod';

/**
 * Prices of a model, in your currency per million tokens; cached prompt tokens at their own price when given.
 * Its own module: the config's schema loads it when a config is checked, while `prices.ts` takes only its type.
 */
export const ModelPriceSchema = z.strictObject({ prompt: z.number().nonnegative(), completion: z.number().nonnegative(), cached: z.number().nonnegative().optional() });
