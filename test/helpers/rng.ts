import { mulberry32 } from '../../src/node/stats/paired-test.ts';

/** A seeded source of uniform numbers in [0, 1). */
export type Rng = () => number;

/**
 * A small seeded PRNG (mulberry32, the one the comparison's permutation tests draw from) for the tests' simulated
 * data: each test seeds its own, so its data does not depend on which tests ran before it.
 * @param seed any number; only its low 32 bits are used.
 */
export const createRng: (seed: number) => Rng = mulberry32;
