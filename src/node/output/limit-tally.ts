import type { AppliedLimit, AppliedLimits, LimitName } from '../../model/limits.ts';

/** How many of a suite's rollouts ran under one value of a limit, enforced one way. */
export interface LimitShare extends AppliedLimit {
  rollouts: number;
}

/**
 * The limits a suite's rollouts ran under, by name: each distinct value and enforcement with how many rollouts it
 * covers (a suite's trials may differ, e.g. a cgroup made for some and not others). Rollouts whose backend said
 * nothing (never started, an invalid row) are in none.
 */
export type SuiteLimits = Partial<Record<LimitName, LimitShare[]>>;

/** Counts the limits of rollouts as they end: a few entries per suite, whatever its size. */
export class LimitTally {
  readonly #shares = new Map<string, { name: LimitName; share: LimitShare }>();
  /**
   * The last limits counted and their shares: a backend hands the same object to every rollout of a kind, so most
   * rollouts are counted without making a key per limit.
   */
  #last: { limits: AppliedLimits; shares: LimitShare[] } | undefined;

  add(limits: AppliedLimits | undefined): void {
    if (!limits) return;
    if (this.#last?.limits === limits) {
      for (const share of this.#last.shares) share.rollouts += 1;
      return;
    }
    const shares: LimitShare[] = [];
    for (const [name, limit] of Object.entries(limits) as [LimitName, AppliedLimit | undefined][]) {
      if (!limit) continue;
      const key = `${name}\0${limit.value}\0${limit.enforcedBy}`;
      let known = this.#shares.get(key);
      if (!known) this.#shares.set(key, (known = { name, share: { value: limit.value, enforcedBy: limit.enforcedBy, rollouts: 0 } }));
      known.share.rollouts += 1;
      shares.push(known.share);
    }
    this.#last = { limits, shares };
  }

  /** The tally, most rollouts first within each limit; undefined when no rollout had limits. */
  result(): SuiteLimits | undefined {
    if (!this.#shares.size) return undefined;
    const limits: SuiteLimits = {};
    for (const { name, share } of this.#shares.values()) (limits[name] ??= []).push({ ...share });
    for (const shares of Object.values(limits)) shares.sort((a, b) => b.rollouts - a.rollouts || a.value - b.value);
    return limits;
  }
}

