import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Each directory's answer, so that a project's files share one read of their package.json. */
const typeOfDir = new Map<string, boolean>();

/** Whether the nearest package.json above `file` says `"type": "module"` (Node's rule for `.ts` as for `.js`). */
export function inModulePackage(file: string): boolean {
  const dir = path.dirname(file);
  let isModule = typeOfDir.get(dir);
  if (isModule === undefined) {
    isModule = packageJsonType(dir) ?? (path.dirname(dir) !== dir && inModulePackage(dir));
    typeOfDir.set(dir, isModule);
  }
  return isModule;
}

/** The directory's package.json's verdict, or undefined when it has none (an unreadable one is CommonJS, as in Node). */
function packageJsonType(dir: string): boolean | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(dir, 'package.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    return (JSON.parse(text) as { type?: unknown }).type === 'module';
  } catch {
    return false;
  }
}
