import { loadModule } from '../../runtime/load-module.ts';
import { UsageError } from '../errors.ts';
import type { ReporterChoice } from '../config/resolve-config.ts';
import { BUILT_IN_REPORTERS } from './built-in.ts';
import type { Reporter } from '../types/reporter.ts';
import { printable } from './printable.ts';
import { describeFailure } from './reporter-failure.ts';

/** A reporter's class constructed with its options: one that throws is a usage error naming it. */
function construct(name: string, Class: new (options: object) => Reporter, options: object): Reporter {
  try {
    return new Class(options);
  } catch (error) {
    throw new UsageError(printable(`reporter "${name}" could not be constructed: ${describeFailure(error)}`));
  }
}

/**
 * A custom reporter from a module path or package name: its default export, a class constructed with the
 * reporter's options, or a reporter object. Anything that cannot be loaded is a usage error naming it.
 */
export async function loadReporter({ name, options }: ReporterChoice, root: string): Promise<Reporter> {
  let exported: unknown;
  try {
    const module = await loadModule(name, root);
    exported = module.default ?? module.reporter;
  } catch (error) {
    throw new UsageError(`unknown reporter "${name}": not one of ${Object.keys(BUILT_IN_REPORTERS).join(', ')}, and it could not be loaded as a module: ${(error as Error).message}`);
  }
  if (typeof exported === 'function') return construct(name, exported as new (options: object) => Reporter, { ...options });
  if (typeof exported === 'object' && exported !== null) return exported as Reporter;
  throw new UsageError(`reporter module "${name}" has no default export: export a class implementing Reporter, or a reporter object`);
}
