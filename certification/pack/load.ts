/**
 * Reading a script pack: YAML, then the schema, then the rules a schema cannot say (unique ids, parents that exist
 * and come first, actions the model has, a configuration the terminal accepts). Every problem is a {@link PackError} naming the file and line, the case and
 * the field; nothing in a bad pack is run.
 */
import { readFileSync } from 'node:fs';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { ConfigError, parseConfig } from '../../src/config/index.js';
import { mergeConfig } from './merge.js';
import { MODEL_ACTIONS, OPERATOR_ACTIONS, packSchema, type Pack, type PackCase } from './schema.js';

export type PackErrorCode = 'PACK_UNREADABLE' | 'PACK_YAML' | 'PACK_SCHEMA' | 'PACK_RULE';

/**
 * A pack that cannot run: `where` is the file, the line (when the problem has one) and the dotted path of the field:
 * `parking.yaml:212#cases[3].steps[1].amount`.
 */
export class PackError extends Error {
  override readonly name = 'PackError';
  constructor(
    readonly code: PackErrorCode,
    message: string,
    readonly where: string,
  ) {
    super(message);
  }
}

function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}

/** Options of {@link parsePack}: the simulated reader's card names, to refuse a case with an unknown card. */
export interface PackOptions {
  cards?: readonly string[];
}

/**
 * The line of the YAML node at `path` (1-based), or of the nearest node above it that the text has (a missing field
 * is reported at its mapping). `key`: the line of that key of the mapping instead (an unknown key).
 */
function lineOf(
  doc: Document,
  lines: LineCounter,
  path: readonly PropertyKey[],
  key?: string,
): number | undefined {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth), true);
    if (node === undefined || node === null || typeof node !== 'object') continue;
    if (depth === path.length && key !== undefined && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
      const offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
      if (offset !== undefined) return lines.linePos(offset).line;
    }
    const offset = (node as { range?: readonly number[] | null }).range?.[0];
    if (offset !== undefined) return lines.linePos(offset).line;
  }
  return undefined;
}

/** One broken cross-case rule: the field it is about (a path into the pack) and what is wrong. */
interface RuleProblem {
  path: readonly PropertyKey[];
  text: string;
}

/**
 * Why the terminal configuration `layers` make (on the defaults) is invalid, or undefined when it is valid: a pack whose
 * configuration no terminal accepts would fail every case it sets, after running them all.
 */
function configProblem(layers: ReadonlyArray<Record<string, unknown> | undefined>): string | undefined {
  try {
    parseConfig(mergeConfig(...layers), 'the configuration');
    return undefined;
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
}

function checkCase(
  c: PackCase,
  index: number,
  seen: Map<string, PackCase>,
  options: PackOptions,
  packConfig: Record<string, unknown> | undefined,
): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const at = (...rest: PropertyKey[]): readonly PropertyKey[] => ['cases', index, ...rest];
  if (seen.has(c.id)) problems.push({ path: at('id'), text: `${c.id} is used twice` });
  if (c.parent !== undefined) {
    const parent = seen.get(c.parent);
    if (!parent) problems.push({ path: at('parent'), text: `${c.parent} is not a case before this one` });
    else if (parent.model !== c.model)
      problems.push({
        path: at('parent'),
        text: `${c.parent} is a ${parent.model} case, this one a ${c.model} case`,
      });
  }
  if (options.cards && !options.cards.includes(c.card))
    problems.push({
      path: at('card'),
      text: `no simulated card "${c.card}" (known: ${options.cards.join(', ')})`,
    });
  if (c.config !== undefined) {
    const layers: Array<Record<string, unknown> | undefined> = [];
    for (let p: PackCase | undefined = c; p !== undefined; p = p.parent ? seen.get(p.parent) : undefined)
      layers.unshift(p.config);
    const invalid = configProblem([packConfig, ...layers]);
    if (invalid !== undefined) problems.push({ path: at('config'), text: invalid });
  }
  c.steps.forEach((s, i) => {
    if (!MODEL_ACTIONS[c.model].includes(s.do) && !OPERATOR_ACTIONS.includes(s.do))
      problems.push({
        path: at('steps', i, 'do'),
        text: `"${s.do}" is no action of the ${c.model} model (${[...MODEL_ACTIONS[c.model], ...OPERATOR_ACTIONS].join(', ')})`,
      });
  });
  return problems;
}

/** `cases[3].steps[1].amount (case PK-MTR-N2-CL-03)`: the field path, and the id of its case when it has one. */
function describePath(raw: unknown, path: readonly PropertyKey[]): string {
  const text = fieldPath(path);
  if (path[0] !== 'cases' || typeof path[1] !== 'number') return text;
  const id = (raw as { cases?: Array<{ id?: unknown } | null> } | null)?.cases?.[path[1]]?.id;
  return typeof id === 'string' ? `${text} (case ${id})` : text;
}

/**
 * Parses and checks a pack.
 * @throws PackError for YAML syntax, a schema violation or a broken cross-case rule, naming where.
 */
export function parsePack(text: string, file: string, options: PackOptions = {}): Pack {
  const lines = new LineCounter();
  let doc: Document;
  let raw: unknown;
  try {
    doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter: lines });
    const syntax = doc.errors[0];
    if (syntax !== undefined) throw syntax;
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    const line = (e as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    throw new PackError(
      'PACK_YAML',
      `${file} is not valid YAML: ${(e as Error).message.split('\n')[0]}`,
      line !== undefined ? `${file}:${line}` : file,
    );
  }
  /** `file:line` of the node at `path` (just `file` when the text has none). */
  const located = (path: readonly PropertyKey[], key?: string): string => {
    const line = lineOf(doc, lines, path, key);
    return line !== undefined ? `${file}:${line}` : file;
  };
  const parsed = packSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue ? fieldPath(issue.path) : '';
    // An unknown key is reported on the mapping that has it: its line is the key's own.
    const unknownKey = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
    const at = issue ? located(issue.path, unknownKey) : file;
    throw new PackError(
      'PACK_SCHEMA',
      `${at}: ${(issue ? describePath(raw, issue.path) : '') || '(pack)'}: ${issue?.message ?? z.prettifyError(parsed.error)}`,
      `${at}#${path}`,
    );
  }
  const pack = parsed.data;
  const seen = new Map<string, PackCase>();
  const problems: RuleProblem[] = [];
  const invalid = pack.config !== undefined ? configProblem([pack.config]) : undefined;
  if (invalid !== undefined) problems.push({ path: ['config'], text: invalid });
  pack.cases.forEach((c, i) => {
    problems.push(...checkCase(c, i, seen, options, invalid === undefined ? pack.config : undefined));
    seen.set(c.id, c);
  });
  const first = problems[0];
  if (first !== undefined)
    throw new PackError(
      'PACK_RULE',
      problems.map((p) => `${located(p.path)}: ${describePath(raw, p.path)}: ${p.text}`).join('; '),
      `${located(first.path)}#${fieldPath(first.path)}`,
    );
  return pack;
}

/** Reads and checks the pack in `file`. */
export function loadPack(file: string, options: PackOptions = {}): Pack {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new PackError('PACK_UNREADABLE', `cannot read ${file}: ${(e as Error).message}`, file);
  }
  return parsePack(text, file, options);
}

/** The chain of cases a case runs: its ancestors first, then itself. */
export function caseChain(pack: Pack, id: string): PackCase[] {
  const byId = new Map(pack.cases.map((c) => [c.id, c]));
  const chain: PackCase[] = [];
  for (let c = byId.get(id); c !== undefined; c = c.parent ? byId.get(c.parent) : undefined) chain.unshift(c);
  return chain;
}
