import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { caseChain, loadPack, PackError, parsePack } from './load.js';
import { isServiceName, timeoutRequestFor } from '../../src/vocabulary/services.js';
import { EXPECTABLE_SERVICES } from './schema.js';

const SHIPPED = fileURLToPath(new URL('../scripts/parking.yaml', import.meta.url));
const CARDS = ['n1-contact', 'n2-contact', 'n2-contactless'];

const one = (extra: string): string => `pack: t
title: T
version: "1"
cases:
  - id: PK-ATT-N2-CT-01
    title: Sale
    model: attended
    attended: true
    card: n2-contact
    steps:
      - do: sale
        amount: 9900.00
        expect: [{ service: sale, amount: 9900.00, status: AUTHORIZED }]
${extra}`;

function error(text: string): PackError {
  try {
    parsePack(text, 'p.yaml', { cards: CARDS });
  } catch (e) {
    if (e instanceof PackError) return e;
    throw e;
  }
  throw new Error('no PackError');
}

describe('parsePack', () => {
  it('reads amounts written as numbers or strings as two-decimal text', () => {
    const pack = parsePack(one(''), 'p.yaml', { cards: CARDS });
    expect(pack.cases[0]?.steps[0]).toMatchObject({ do: 'sale', amount: '9900.00' });
    expect(pack.cases[0]?.steps[0]?.expect[0]).toEqual({
      service: 'sale',
      amount: '9900.00',
      status: 'AUTHORIZED',
    });
  });

  it('names the field of a schema violation', () => {
    const e = error(one('').replace('amount: 9900.00\n        expect', 'amount: lots\n        expect'));
    expect(e.code).toBe('PACK_SCHEMA');
    expect(e.message).toContain('cases[0].steps[0].amount');
  });

  it('names the line of a schema violation and the case it is in', () => {
    // one(''): line 5 `- id:`, 6 `title:`, 9 `card:`, 11 `- do: sale`, 12 `amount:`.
    const amount = error(one('').replace('amount: 9900.00\n        expect', 'amount: lots\n        expect'));
    expect(amount.where).toBe('p.yaml:12#cases[0].steps[0].amount');
    expect(amount.message).toMatch(/^p\.yaml:12: cases\[0\]\.steps\[0\]\.amount \(case PK-ATT-N2-CT-01\): /);
    const step = error(one('').replace('do: sale', 'do: sael'));
    expect(step.where).toBe('p.yaml:11#cases[0].steps[0].do');
    // A missing field: the line of the mapping that lacks it.
    const missing = error(one('').replace('    model: attended\n', ''));
    expect(missing.where).toBe('p.yaml:5#cases[0].model');
    // An unknown key: the key's own line.
    const unknown = error(one('').replace('title: Sale', 'title: Sale\n    colour: red'));
    expect(unknown.where).toBe('p.yaml:7#cases[0]');
    expect(unknown.message).toContain('colour');
  });

  it('names the line of a broken cross-case rule', () => {
    const card = error(one('').replace('card: n2-contact', 'card: n9-contact'));
    expect(card.code).toBe('PACK_RULE');
    expect(card.where).toBe('p.yaml:9#cases[0].card');
    expect(card.message).toMatch(/^p\.yaml:9: cases\[0\]\.card \(case PK-ATT-N2-CT-01\): no simulated card/);
  });

  it('refuses a YAML syntax error with its line', () => {
    const e = error('pack: t\ncases: [\n');
    expect(e.code).toBe('PACK_YAML');
    expect(e.where).toMatch(/p\.yaml:\d+/);
  });

  it('refuses duplicate ids, unknown parents, unknown cards and actions the model does not have', () => {
    const twice = error(one(one('').split('cases:\n')[1] ?? ''));
    expect(twice.message).toContain('PK-ATT-N2-CT-01 is used twice');
    const orphan = error(
      one(
        `  - { id: PK-ATT-N2-CT-02, title: V, model: attended, attended: true, card: n2-contact, parent: PK-X-01, steps: [{ do: void, of: payment }] }`,
      ),
    );
    expect(orphan.message).toContain('PK-X-01 is not a case before this one');
    const card = error(one('').replace('card: n2-contact', 'card: n9-contact'));
    expect(card.message).toContain('no simulated card "n9-contact"');
    const action = error(
      one('').replace('do: sale\n        amount: 9900.00', 'do: park\n        minutes: 60'),
    );
    expect(action.message).toContain('"park" is no action of the attended model');
  });

  it('refuses a configuration the terminal does not accept, of the pack or of a case, before any case runs', () => {
    const ofCase = error(
      one('').replace(
        '    card: n2-contact\n',
        '    card: n2-contact\n    config:\n      terminal:\n        id: TOO-LONG-ID\n',
      ),
    );
    expect(ofCase.code).toBe('PACK_RULE');
    expect(ofCase.message).toContain('p.yaml:11: cases[0].config (case PK-ATT-N2-CT-01)');
    expect(ofCase.message).toContain('"terminal.id"');
    const ofPack = error(one('').replace('cases:\n', 'config:\n  tarif: {}\ncases:\n'));
    expect(ofPack.code).toBe('PACK_RULE');
    expect(ofPack.message).toContain('unknown key "tarif"');
  });

  it('refuses an unknown key and an unknown service', () => {
    expect(error(one('').replace('title: Sale', 'title: Sale\n    colour: red')).code).toBe('PACK_SCHEMA');
    expect(error(one('').replace('service: sale', 'service: purchase')).message).toContain('service');
  });
});

describe('the shipped pack', () => {
  const pack = loadPack(SHIPPED);

  it('has at least 60 cases with unique ids, each network, entry mode, model and the MLV amounts', () => {
    expect(pack.cases.length).toBeGreaterThanOrEqual(60);
    expect(new Set(pack.cases.map((c) => c.id)).size).toBe(pack.cases.length);
    const cards = new Set(pack.cases.map((c) => c.card));
    for (const card of [
      'n1-contact',
      'n1-contactless',
      'n1-swipe',
      'n1-msd',
      'n2-contact',
      'n2-contactless',
      'n2-swipe',
      'n2-msd',
      'chip-fails-then-swiped',
    ])
      expect(cards).toContain(card);
    expect(new Set(pack.cases.map((c) => c.model))).toEqual(
      new Set(['attended', 'kiosk', 'meter', 'tap-and-go']),
    );
    expect(new Set(pack.cases.map((c) => c.attended))).toEqual(new Set([true, false]));
    const amounts = JSON.stringify(pack.cases);
    for (const amount of ['9900.00', '9601.00', '9604.00', '9901.00', '3000.00'])
      expect(amounts).toContain(amount);
  });

  it('expects every parking service somewhere, and each timeout request in a case of its own', () => {
    const expected = new Set(
      pack.cases.flatMap((c) => c.steps.flatMap((s) => s.expect.map((m) => m.service))),
    );
    for (const service of EXPECTABLE_SERVICES) expect(expected, service).toContain(service);
    const timeoutCases = pack.cases.filter((c) =>
      c.steps.some((s) =>
        s.expect.some((m) => m.service === 'timeout-void' || m.service === 'timeout-reversal'),
      ),
    );
    expect(timeoutCases.length).toBeGreaterThanOrEqual(10);
  });

  it('follows every request left unanswered with the timeout request the terminal sends for it, in a case of each service', () => {
    // gateway.md §2: an authorization without answer (a zero-amount verification too) is followed by a timeout
    // reversal for the amount it requested; a capture, sale, refund or credit by a timeout void. The plan is the
    // vocabulary's, so a case cannot go on expecting what the terminal no longer sends.
    const chains = new Set<string>();
    for (const c of pack.cases)
      for (const [i, step] of c.steps.entries())
        step.expect.forEach((m, j) => {
          if (m.status !== 'SERVER_ERROR' || !isServiceName(m.service)) return;
          const timeout = timeoutRequestFor(m.service);
          if (timeout === null) return;
          const next = step.expect[j + 1];
          const where = `${c.id} step ${i + 1}: ${m.service} without answer`;
          expect(next?.service, where).toBe(timeout);
          if (timeout === 'timeout-reversal') expect(next?.amount, where).toBe(m.amount);
          chains.add(m.service);
        });
    const planned = EXPECTABLE_SERVICES.filter((s) => isServiceName(s) && timeoutRequestFor(s) !== null);
    expect([...chains].sort()).toEqual([...planned].sort());
  });

  it('chains a follow-on after its parents', () => {
    expect(caseChain(pack, 'PK-ATT-N2-CT-06').map((c) => c.id)).toEqual([
      'PK-ATT-N2-CT-01',
      'PK-ATT-N2-CT-05',
      'PK-ATT-N2-CT-06',
    ]);
  });
});
