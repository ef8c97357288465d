import Table from 'cli-table3';
import type { Colors } from '../colors.ts';
import { shorten } from '../format.ts';

/** Characters of a cell shown: every line of a table is as wide as its longest cell. */
const MAX_CELL_CHARS = 120;
/** cli-table3's border characters. */
const BORDER = /[─│┌┐└┘├┤┬┴┼]+/g;

/**
 * A summary table with cyan headings and gray borders when the terminal has colours. They are the tool's own
 * colours, not cli-table3's: the terminal escapes any colour code it did not make.
 */
export class TerminalTable {
  readonly #table: Table.Table;

  constructor(
    head: string[],
    private readonly colors: Colors,
  ) {
    this.#table = new Table({ head: head.map(colors.cyan), style: { head: [], border: [] } });
  }

  push(row: string[]): void {
    this.#table.push(row.map((cell) => shorten(cell, MAX_CELL_CHARS)));
  }

  toString(): string {
    return this.#table.toString().replace(BORDER, this.colors.gray);
  }
}
