import type { ReporterSet } from '../reporters/reporter-set.ts';
import { exitProcess } from '../../runtime/faults.ts';

const written = (stream: NodeJS.WriteStream) => new Promise((done) => stream.write('', done));

/**
 * The command's exit code. A reporter hook given up after its timeout may still hold the event loop (a timer, a
 * socket) and keep the process from ever ending: then the process exits once stdout and stderr have taken all.
 */
export function exitOnceWritten(reporters: ReporterSet, code: number): number {
  if (reporters.abandoned) void Promise.all([written(process.stdout), written(process.stderr)]).then(() => exitProcess(code));
  return code;
}
