/**
 * Reading a script pack: YAML, then the schema, then the rules a schema cannot say (unique ids, parents that exist
 * and come first, actions the model has). Every problem is a {@link PackError} naming the file, the case and the
 * field; nothing in a bad pack is run.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { MODEL_ACTIONS, OPERATOR_ACTIONS, packSchema, type Pack, type PackCase } from './schema.js';

export type PackErrorCode = 'PACK_UNREADABLE' | 'PACK_YAML' | 'PACK_SCHEMA' | 'PACK_RULE';

/** A pack that cannot run: `where` is the file and the dotted path of the field (e.g. `cases[3].steps[1].amount`). */
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

function checkCase(c: PackCase, index: number, seen: Map<string, PackCase>, options: PackOptions): string[] {
  const at = `cases[${index}] (${c.id})`;
  const problems: string[] = [];
  if (seen.has(c.id)) problems.push(`${at}.id: ${c.id} is used twice`);
  if (c.parent !== undefined) {
    const parent = seen.get(c.parent);
    if (!parent) problems.push(`${at}.parent: ${c.parent} is not a case before this one`);
    else if (parent.model !== c.model)
      problems.push(`${at}.parent: ${c.parent} is a ${parent.model} case, this one a ${c.model} case`);
  }
  if (options.cards && !options.cards.includes(c.card))
    problems.push(`${at}.card: no simulated card "${c.card}" (known: ${options.cards.join(', ')})`);
  c.steps.forEach((s, i) => {
    if (!MODEL_ACTIONS[c.model].includes(s.do) && !OPERATOR_ACTIONS.includes(s.do))
      problems.push(
        `${at}.steps[${i}].do: "${s.do}" is no action of the ${c.model} model (${[...MODEL_ACTIONS[c.model], ...OPERATOR_ACTIONS].join(', ')})`,
      );
  });
  return problems;
}

/**
 * Parses and checks a pack.
 * @throws PackError for YAML syntax, a schema violation or a broken cross-case rule, naming where.
 */
export function parsePack(text: string, file: string, options: PackOptions = {}): Pack {
  let raw: unknown;
  try {
    raw = parseYaml(text, { prettyErrors: true, uniqueKeys: true, maxAliasCount: 100 });
  } catch (e) {
    const where = e instanceof YAMLParseError && e.linePos ? `${file}:${e.linePos[0].line}` : file;
    throw new PackError(
      'PACK_YAML',
      `${file} is not valid YAML: ${(e as Error).message.split('\n')[0]}`,
      where,
    );
  }
  const parsed = packSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue ? fieldPath(issue.path) : '';
    throw new PackError(
      'PACK_SCHEMA',
      `${file}: ${path || '(pack)'}: ${issue?.message ?? z.prettifyError(parsed.error)}`,
      `${file}#${path}`,
    );
  }
  const pack = parsed.data;
  const seen = new Map<string, PackCase>();
  const problems: string[] = [];
  pack.cases.forEach((c, i) => {
    problems.push(...checkCase(c, i, seen, options));
    seen.set(c.id, c);
  });
  if (problems.length > 0)
    throw new PackError(
      'PACK_RULE',
      `${file}: ${problems.join('; ')}`,
      `${file}#${problems[0]?.split(':')[0] ?? ''}`,
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
