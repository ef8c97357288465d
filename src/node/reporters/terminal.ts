import pc from 'picocolors';

/** Where a reporter writes, and whether it may draw (colors, a live line): only on an interactive terminal. */
export interface Terminal {
  write(text: string): void;
  interactive: boolean;
  colors: ReturnType<typeof pc.createColors>;
}

/** Plain, stable output unless stdout is a TTY and this is not CI. `FORCE_COLOR` forces colors on. */
export function stdoutTerminal(): Terminal {
  const interactive = Boolean(process.stdout.isTTY) && !process.env.CI;
  const colored = (interactive && !process.env.NO_COLOR) || Boolean(process.env.FORCE_COLOR);
  return { write: (text) => void process.stdout.write(text), interactive, colors: pc.createColors(colored) };
}
