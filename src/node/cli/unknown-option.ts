import type { Command } from 'cac';
import { closest } from '../config/schema-errors.ts';
import { UsageError } from '../errors.ts';

/** cac's key of an option as typed: `--fail-on-regresion` and `--failOnRegresion` are both `failOnRegresion`. */
const camelCased = (name: string) => name.replace(/([a-z])-([a-z])/g, (_, a: string, b: string) => a + b.toUpperCase());

/** The name of a flag as typed (`--failOnRegresion`), without its value (`=x`) or key (`.json`). */
const typedName = (arg: string) => /^-{1,2}[^=.]+/.exec(arg)?.[0];

/** The argument the user typed that cac reports as `name` (camel-cased, without dashes or a `no-`). */
function typedFlag(name: string, argv: readonly string[]): string | undefined {
  const end = argv.indexOf('--');
  for (const arg of end === -1 ? argv : argv.slice(0, end)) {
    const typed = typedName(arg);
    const bare = typed?.replace(/^-{1,2}/, '');
    if (bare !== undefined && (camelCased(bare) === name || camelCased(bare.replace(/^no-/, '')) === name)) return typed;
  }
  return undefined;
}

/** Flags compared without case and dashes: `--failOnRegresion` is one letter from `--fail-on-regression`. */
const bare = (flag: string) => flag.replace(/-/g, '').toLowerCase();

/** The long flags a command takes, as `--help` shows them (`--fail-on-regression`, `--outputFile`). */
function longFlags(commands: readonly Command[]): string[] {
  return commands.flatMap((command) => command.options.flatMap((option) => option.rawName.match(/--[\w-]+/g) ?? []));
}

/**
 * cac's "Unknown option `--failOnRegresion`" names the flag camel-cased, as the user may never have typed it, and
 * suggests nothing: this names it as typed and, as the config's keys do, the flag probably meant. Other errors are
 * returned as they are.
 */
export function explainUnknownOption(error: unknown, argv: readonly string[], commands: readonly Command[]): unknown {
  const name = (error as Error)?.name === 'CACError' ? /^Unknown option `-{1,2}(.+)`$/.exec((error as Error).message)?.[1] : undefined;
  if (name === undefined) return error;
  const typed = typedFlag(name, argv) ?? (name.length > 1 ? `--${name}` : `-${name}`);
  const known = longFlags(commands);
  const byBare = new Map(known.map((flag) => [bare(flag), flag]));
  const guess = typed.startsWith('--') ? closest(bare(typed), [...byBare.keys()]) : undefined;
  const hint = guess === undefined ? '' : ` Did you mean \`${byBare.get(guess)}\`?`;
  return new UsageError(`Unknown option \`${typed}\`.${hint}`);
}
