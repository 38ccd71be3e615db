// @ts-check
/**
 * `local/no-import-cycle`: an import that closes a cycle among the project's own modules is an error.
 *
 * Why a rule of our own: the `no-cycle` of eslint-plugin-import and of eslint-plugin-import-x skips type-only imports
 * and has no option to count them, so both cycles the architecture review found (`journal/offline-queue.ts` ↔
 * `journal/recovery.ts`, `sandbox/request-record.ts` ↔ `sandbox/store.ts`, each closed by an `import type`) pass it.
 * A type-only cycle is no load-order hazard, but it is a design cycle all the same: neither module can be read, moved
 * or replaced without the other.
 *
 * The graph is read from the TypeScript program that typescript-eslint has already built for type-aware linting, so a
 * specifier resolves exactly as tsc resolves it (NodeNext: `./store.js` is `store.ts`) with no resolver to configure,
 * and the cost is one pass over the program's files plus a strongly connected components search, once per program.
 * Edges: `import` and `export … from` (type-only ones included), `import x = require(…)`, and `import(…)` with a
 * literal specifier (deferred loading does not make two modules independent).
 */
import { relative } from 'node:path';
import ts from 'typescript';

/**
 * Literal module specifiers of one file, in source order. Kept per source file: typescript-eslint may hand out a new
 * program version while linting, and unchanged files keep their `SourceFile` object.
 * @type {WeakMap<ts.SourceFile, ts.StringLiteralLike[]>}
 */
const specifiersByFile = new WeakMap();

/**
 * @typedef {object} ProgramGraph
 * @property {Map<string, string[]>} edges own file → own files it imports
 * @property {Map<string, number>} component own file → its strongly connected component
 * @property {Set<number>} cyclic components of more than one file
 */

/** @type {WeakMap<ts.Program, ProgramGraph>} */
const graphs = new WeakMap();

/** @param {ts.SourceFile} sourceFile */
function moduleSpecifiers(sourceFile) {
  const cached = specifiersByFile.get(sourceFile);
  if (cached) return cached;
  /** @type {ts.StringLiteralLike[]} */
  const found = [];
  /** @param {ts.Node} node */
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteralLike(node.moduleSpecifier)) found.push(node.moduleSpecifier);
      return;
    }
    if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteralLike(expression)) found.push(expression);
      return;
    }
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  specifiersByFile.set(sourceFile, found);
  return found;
}

/**
 * @param {ts.Program} program
 * @param {ts.SourceFile} sourceFile
 */
function isOwn(program, sourceFile) {
  return (
    !sourceFile.isDeclarationFile &&
    !program.isSourceFileFromExternalLibrary(sourceFile) &&
    !sourceFile.fileName.includes('/node_modules/')
  );
}

/**
 * What tsc resolves a specifier to, per compiler options (one object per tsconfig, shared by its program versions):
 * `file\0mode\0specifier` → resolved file name, and tsc's own cache for the package lookups behind it.
 * @type {WeakMap<ts.CompilerOptions, { resolved: Map<string, string | undefined>, cache: ts.ModuleResolutionCache }>}
 */
const resolutions = new WeakMap();

/**
 * The own file `specifier` names from `sourceFile`, as tsc resolves it; undefined for packages and Node built-ins.
 * @param {ts.Program} program
 * @param {ts.SourceFile} sourceFile
 * @param {ts.StringLiteralLike} specifier
 */
function resolveOwn(program, sourceFile, specifier) {
  const options = program.getCompilerOptions();
  let known = resolutions.get(options);
  if (!known) {
    const cache = ts.createModuleResolutionCache(program.getCurrentDirectory(), (name) => name, options);
    known = { resolved: new Map(), cache };
    resolutions.set(options, known);
  }
  const mode = program.getModeForUsageLocation(sourceFile, specifier);
  const key = `${sourceFile.fileName}\u0000${String(mode)}\u0000${specifier.text}`;
  let fileName = known.resolved.get(key);
  if (!known.resolved.has(key)) {
    const { resolvedModule } = ts.resolveModuleName(
      specifier.text,
      sourceFile.fileName,
      options,
      ts.sys,
      known.cache,
      undefined,
      mode,
    );
    fileName = resolvedModule?.resolvedFileName;
    known.resolved.set(key, fileName);
  }
  const target = fileName === undefined ? undefined : program.getSourceFile(fileName);
  return target !== undefined && isOwn(program, target) ? target.fileName : undefined;
}

/** @param {ts.Program} program */
function graphOf(program) {
  const cached = graphs.get(program);
  if (cached) return cached;
  /** @type {ProgramGraph} */
  const graph = { edges: new Map(), component: new Map(), cyclic: new Set() };
  for (const sourceFile of program.getSourceFiles()) {
    if (!isOwn(program, sourceFile)) continue;
    /** @type {Set<string>} */
    const targets = new Set();
    for (const specifier of moduleSpecifiers(sourceFile)) {
      const target = resolveOwn(program, sourceFile, specifier);
      if (target !== undefined && target !== sourceFile.fileName) targets.add(target);
    }
    graph.edges.set(sourceFile.fileName, [...targets]);
  }
  markComponents(graph);
  graphs.set(program, graph);
  return graph;
}

/**
 * Tarjan's strongly connected components, iterative (a long import chain must not exhaust the call stack).
 * @param {ProgramGraph} graph
 */
function markComponents(graph) {
  /** @type {Map<string, number>} */
  const index = new Map();
  /** @type {Map<string, number>} */
  const low = new Map();
  /** @type {string[]} */
  const stack = [];
  const onStack = new Set();
  let next = 0;
  let components = 0;
  for (const root of graph.edges.keys()) {
    if (index.has(root)) continue;
    /** @type {Array<{ file: string, edge: number }>} */
    const work = [{ file: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = /** @type {{ file: string, edge: number }} */ (work[work.length - 1]);
      const targets = graph.edges.get(frame.file) ?? [];
      if (frame.edge < targets.length) {
        const target = /** @type {string} */ (targets[frame.edge++]);
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(Number(low.get(frame.file)), Number(index.get(target))));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(Number(low.get(parent.file)), Number(low.get(frame.file))));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const id = components++;
      let size = 0;
      for (;;) {
        const member = /** @type {string} */ (stack.pop());
        onStack.delete(member);
        graph.component.set(member, id);
        size++;
        if (member === frame.file) break;
      }
      if (size > 1) graph.cyclic.add(id);
    }
  }
}

/**
 * A shortest import path from `from` back to `to`, both in one component.
 * @param {ProgramGraph} graph
 * @param {string} from
 * @param {string} to
 */
function pathBack(graph, from, to) {
  const component = graph.component.get(from);
  /** @type {Map<string, string | undefined>} */
  const cameFrom = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const file = /** @type {string} */ (queue.shift());
    if (file === to) break;
    for (const target of graph.edges.get(file) ?? []) {
      if (cameFrom.has(target) || graph.component.get(target) !== component) continue;
      cameFrom.set(target, file);
      queue.push(target);
    }
  }
  /** @type {string[]} */
  const path = [];
  for (let file = /** @type {string | undefined} */ (to); file !== undefined; file = cameFrom.get(file)) {
    path.unshift(file);
  }
  return path;
}

/** @type {import('eslint').Rule.RuleModule} */
export const noImportCycle = {
  meta: {
    type: 'problem',
    docs: {
      description: 'Disallow an import that closes a cycle among our own modules (type-only imports count).',
    },
    schema: [],
    messages: {
      cycle:
        'Import cycle: {{path}}. Move what both sides need to the lower module, or invert the dependency.',
    },
  },
  create(context) {
    // typescript-eslint's parser services: the program exists because every file is linted with type information.
    /** @type {unknown} */
    const parserServices = context.sourceCode.parserServices;
    const program = /** @type {{ program?: ts.Program | null } | undefined} */ (parserServices)?.program;
    if (!program) return {};
    const sourceFile = program.getSourceFile(context.physicalFilename);
    if (!sourceFile || !isOwn(program, sourceFile)) return {};
    const graph = graphOf(program);
    const self = sourceFile.fileName;
    const component = graph.component.get(self);
    if (component === undefined || !graph.cyclic.has(component)) return {};
    /** @param {string} file */
    const shown = (file) => relative(context.cwd, file);
    return {
      Program() {
        for (const specifier of moduleSpecifiers(sourceFile)) {
          const target = resolveOwn(program, sourceFile, specifier);
          if (target === undefined || target === self || graph.component.get(target) !== component) continue;
          const start = sourceFile.getLineAndCharacterOfPosition(specifier.getStart(sourceFile));
          const end = sourceFile.getLineAndCharacterOfPosition(specifier.getEnd());
          context.report({
            loc: {
              start: { line: start.line + 1, column: start.character },
              end: { line: end.line + 1, column: end.character },
            },
            messageId: 'cycle',
            data: { path: [self, ...pathBack(graph, target, self)].map(shown).join(' → ') },
          });
        }
      },
    };
  },
};
