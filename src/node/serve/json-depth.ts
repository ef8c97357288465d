/**
 * Whether a parsed JSON value nests arrays and objects more than `max` levels deep (`{}` is one level, `[{}]`
 * two). The walk keeps its own stack, not the call stack: a body nested 100,000 deep is measured, not a crash.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<{ node: unknown; level: number }> = [{ node: value, level: 1 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { node, level } = next;
    if (node === null || typeof node !== 'object') continue;
    if (level > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push({ node: child, level: level + 1 });
    }
  }
  return false;
}
