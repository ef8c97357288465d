import type * as z from 'zod';

/** Edit distance of two short strings (insertions, deletions, substitutions, adjacent swaps). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The known key closest to a mistyped one, when it is close enough to be what was meant. */
export function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const d = distance(lower, candidate.toLowerCase());
    if (!best || d < best.distance) best = { key: candidate, distance: d };
  }
  return best && best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.key : undefined;
}

/** The keys an object schema at `path` accepts (through optional, nullable and union wrappers). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const def = (schema as z.ZodType & { def: Record<string, any> }).def;
  if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default') return keysAt(def.innerType, path);
  if (def.type === 'union') return [...new Set((def.options as z.ZodType[]).flatMap((option) => keysAt(option, path)))];
  if (def.type !== 'object') return [];
  const shape = def.shape as Record<string, z.ZodType>;
  if (path.length === 0) return Object.keys(shape);
  const next = shape[String(path[0])];
  return next ? keysAt(next, path.slice(1)) : [];
}

const where = (path: readonly PropertyKey[]) => (path.length ? path.map(String).join('.') : '(top level)');

/**
 * The problems of a failed parse, a line each, with the path of each value; an unknown key says which known
 * key was probably meant ("did you mean `threshold`?") and an enum lists the valid values.
 */
export function describeIssues(schema: z.ZodType, error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code !== 'unrecognized_keys') return `${where(issue.path)}: ${issue.message}`;
      const known = keysAt(schema, issue.path);
      return issue.keys
        .map((key) => {
          const guess = closest(key, known);
          const hint = guess ? `; did you mean \`${guess}\`?` : known.length ? `; known keys: ${known.join(', ')}` : '';
          return `${where([...issue.path, key])}: unknown key "${key}"${hint}`;
        })
        .join('\n');
    })
    .join('\n');
}
