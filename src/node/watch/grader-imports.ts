import { readFile } from 'node:fs/promises';
import { parse } from 'acorn';
import { transformOnGraphService } from './import-graph.ts';

/** An ESTree node as acorn gives it: what the walk reads of one. */
interface Node {
  type: string;
  [field: string]: unknown;
}

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';

/** `defineRollout({ …, grader: X })`: the property whose value is a suite's grader. */
function isGraderProperty(node: Node, parent: Node | undefined, grandparent: Node | undefined): boolean {
  const key = node.key as Node;
  const call = grandparent?.callee as Node | undefined;
  return !node.computed && key.type === 'Identifier' && key.name === 'grader' && parent?.type === 'ObjectExpression' &&
    grandparent?.type === 'CallExpression' && call?.type === 'Identifier' && call.name === 'defineRollout';
}

/**
 * Each name the code mentions, counted: `uses` everywhere but the value of a `grader:` property of a
 * `defineRollout({…})` argument, `graderUses` there. Names are counted by spelling, scopes aside: a local
 * variable of the same name counts as a use, which only ever makes a module count as the workflow's too.
 */
function countNames(node: Node, parents: Node[], uses: Set<string>, graderUses: Set<string>): void {
  const [parent, grandparent] = [parents.at(-1), parents.at(-2)];
  if (node.type === 'ImportDeclaration') return;
  if (node.type === 'Identifier') {
    const asGrader = parent?.type === 'Property' && parent.value === node && isGraderProperty(parent, grandparent, parents.at(-3));
    (asGrader ? graderUses : uses).add(node.name as string);
    return;
  }
  for (const [field, value] of Object.entries(node)) {
    // A property's, method's or member's name (`{ a: … }`, `a() {}`, `x.a`) names no binding.
    if ((field === 'key' || field === 'property') && !node.computed) continue;
    for (const child of Array.isArray(value) ? value : [value]) if (isNode(child)) countNames(child, [...parents, node], uses, graderUses);
  }
}

/** The module specifiers the program loads other than through an import declaration: `export … from`, `import()`. */
function otherLoads(program: Node): Set<string> {
  const loads = new Set<string>();
  const visit = (node: Node): void => {
    const source = node.source as Node | undefined;
    if (node.type !== 'ImportDeclaration' && source?.type === 'Literal') loads.add(String(source.value));
    for (const value of Object.values(node)) for (const child of Array.isArray(value) ? value : [value]) if (isNode(child)) visit(child);
  };
  visit(program);
  return loads;
}

/**
 * The specifiers of the modules a rollout file imports only to give a suite its grader: each of their imported
 * names is used as the `grader:` of a `defineRollout({…})` call and nowhere else, and the module is loaded in no
 * other way (a bare `import './x'`, a re-export, an `import()`). A change to such a module calls for a re-grade,
 * not a run of the workflow. TypeScript is stripped with esbuild first (type-only imports go with it). Empty when
 * the file does not parse: its suites then rerun whole.
 */
export async function graderOnlyImports(file: string): Promise<Set<string>> {
  let program: Node;
  try {
    const { code } = await transformOnGraphService(await readFile(file, 'utf8'), { loader: file.endsWith('x') ? 'tsx' : 'ts', format: 'esm', sourcefile: file });
    program = parse(code, { ecmaVersion: 'latest', sourceType: 'module' }) as unknown as Node;
  } catch {
    return new Set();
  }
  const uses = new Set<string>();
  const graderUses = new Set<string>();
  countNames(program, [], uses, graderUses);
  const bindings = new Map<string, string[]>();
  for (const declaration of program.body as Node[]) {
    if (declaration.type !== 'ImportDeclaration') continue;
    const specifier = String((declaration.source as Node).value);
    const locals = (declaration.specifiers as Node[]).map((s) => (s.local as Node).name as string);
    bindings.set(specifier, [...(bindings.get(specifier) ?? []), ...(locals.length === 0 ? [''] : locals)]);
  }
  const loaded = otherLoads(program);
  const graderOnly = [...bindings].filter(([specifier, locals]) => !loaded.has(specifier) && locals.every((name) => graderUses.has(name) && !uses.has(name)));
  return new Set(graderOnly.map(([specifier]) => specifier));
}
