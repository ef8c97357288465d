/**
 * A call that loads a module named at run time: `import(x)` (or a CommonJS `require(x)`, which esbuild's ESM
 * bundle writes `__require(x)`). A literal name is an external package; a template literal became a glob.
 */
const COMPUTED = /(?<![\w$.'"`])(?:import|__require)\((?!\s*(["'])[^"'\\]*\1\s*[,)])/;

/** The line esbuild writes before each module's code in a bundle: `// path`, or `// import("glob") in path`. */
const HEADER = /^\/\/ (?:import\(.*\) in )?(.+)$/;

/**
 * The modules (as the metafile names its `inputs`) whose code in an esbuild bundle loads a module named at run
 * time. Bundled code keeps no comment of the user's but legal ones, so a header line that names an input starts
 * that module's code.
 */
export function computedImports(bundle: string, inputs: Set<string>): Set<string> {
  const found = new Set<string>();
  let current: string | undefined;
  for (const line of bundle.split('\n')) {
    const header = HEADER.exec(line)?.[1];
    if (header !== undefined && inputs.has(header)) current = header;
    else if (current !== undefined && COMPUTED.test(line)) found.add(current);
  }
  return found;
}
