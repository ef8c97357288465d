import { UsageError } from '../errors.ts';

/** Which 1-based rows to run, from `--rows 1,3,5-9`. */
export interface RowSelection {
  has(row: number): boolean;
  readonly source: string;
}

export function parseRowSelection(source: string): RowSelection {
  const ranges = source.split(',').map((part) => {
    const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!match) throw new UsageError(`--rows ${JSON.stringify(source)}: "${part}" is not a row or a range like 5-9`);
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (from < 1 || to < from) throw new UsageError(`--rows: "${part}" must count from 1 upwards`);
    return [from, to] as const;
  });
  return { source, has: (row) => ranges.some(([from, to]) => row >= from && row <= to) };
}
