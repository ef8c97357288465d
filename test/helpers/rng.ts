/** A seeded source of uniform numbers in [0, 1). */
export type Rng = () => number;

/**
 * A small seeded PRNG (mulberry32) for the tests' simulated data: each test seeds its own, so its data does not
 * depend on which tests ran before it.
 * @param seed any number; only its low 32 bits are used.
 */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
