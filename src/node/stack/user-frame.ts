import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../../package-files.ts';

/** A place in a source file, as a V8 stack frame names it. */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

const WINDOWS_ABSOLUTE = /^(?:[A-Za-z]:[\\/]|\\\\)/;

/** The location part of a frame line: `at fn (LOCATION)`, `at async fn (LOCATION)` or `at LOCATION`. */
function locationText(line: string): string | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('at ')) return undefined;
  const inParens = /\(([^()]*)\)$/.exec(trimmed);
  return inParens ? inParens[1] : trimmed.slice(3).replace(/^async /, '');
}

/** A file path from a frame's location, or undefined for `node:` internals, `native`, `<anonymous>`, eval. */
function filePath(location: string): string | undefined {
  if (location.startsWith('file://')) {
    try {
      return fileURLToPath(location);
    } catch {
      return undefined;
    }
  }
  return path.posix.isAbsolute(location) || WINDOWS_ABSOLUTE.test(location) ? location : undefined;
}

/** Parses one stack line into a location in a file on disk; anything else (internals, eval, native) is undefined. */
export function parseFrame(line: string): SourceLocation | undefined {
  const location = locationText(line);
  const match = location ? /^(.*):(\d+):(\d+)$/.exec(location) : null;
  if (!match) return undefined;
  const file = filePath(match[1]!);
  return file ? { file, line: Number(match[2]), column: Number(match[3]) } : undefined;
}

/** Code that is not the user's: dependencies and rollout-test itself. Either separator, for Windows stacks. */
function isLibraryFile(file: string): boolean {
  const normalized = file.replace(/\\/g, '/');
  const ownRoot = PACKAGE_ROOT.replace(/\\/g, '/');
  return normalized.includes('/node_modules/') || normalized.startsWith(`${ownRoot}dist/`) || normalized.startsWith(`${ownRoot}src/`);
}

/**
 * The first stack frame in the user's own code: not Node's internals, not node_modules, not rollout-test.
 * It is what someone reading a failure wants to open.
 */
export function userFrame(stack: string | undefined): SourceLocation | undefined {
  for (const line of (stack ?? '').split('\n').slice(1)) {
    const frame = parseFrame(line);
    if (frame && !isLibraryFile(frame.file)) return frame;
  }
  return undefined;
}

/** A path as the user reads it: relative to the project root when inside it, in the path style it was written in. */
export function displayPath(root: string, file: string): string {
  const style = WINDOWS_ABSOLUTE.test(file) ? path.win32 : path;
  if (style === path.win32 && !WINDOWS_ABSOLUTE.test(root)) return file;
  const relative = style.relative(root, file);
  return relative && !relative.startsWith('..') && !style.isAbsolute(relative) ? relative : file;
}

/** `file:line:column`, the file relative to the root. */
export function formatLocation(root: string, location: SourceLocation): string {
  return `${displayPath(root, location.file)}:${location.line}:${location.column}`;
}
