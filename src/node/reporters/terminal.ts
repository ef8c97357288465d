import { type Colors, createColors } from './colors.ts';
import { writeCommand } from './output-guard.ts';
import { escapeControls, printable } from './printable.ts';

/** Where a reporter writes, and whether it may draw (colors, a live line): only on an interactive terminal. */
export interface Terminal {
  /** Prints text as `printable` renders it: untrusted parts of it can neither control the terminal nor the CI. */
  write(text: string): void;
  /** Prints a GitHub workflow command of the tool's own, one line whose data is escaped by GitHub's rules. */
  command(line: string): void;
  interactive: boolean;
  colors: Colors;
}

/** Plain, stable output unless stdout is a TTY and this is not CI. `FORCE_COLOR` forces colors on. */
export function stdoutTerminal(): Terminal {
  const interactive = Boolean(process.stdout.isTTY) && !process.env.CI;
  const colored = (interactive && !process.env.NO_COLOR) || Boolean(process.env.FORCE_COLOR);
  return {
    write: (text) => void process.stdout.write(printable(text)),
    command: (line) => writeCommand(escapeControls(line)),
    interactive,
    colors: createColors(colored),
  };
}
