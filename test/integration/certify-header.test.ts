/**
 * The header of a certification report states the identity the run's terminals sent — the analyst's configuration,
 * the pack's and each case's own on top of the defaults — never the configuration's defaults in its stead; and
 * counts each case of the run once.
 */
import { describe, expect, it } from 'vitest';
import { parsePack } from '../../certification/pack/load.js';
import { runPack } from '../../certification/runner/index.js';
import { VIRTUAL_CARD_NAMES } from '../../devices/sim/cards.js';

const sale = (id: string, config: string): string => `  - id: ${id}
    title: Attended sale ${id}
    model: attended
    attended: true
    card: n1-contact
${config}    steps:
      - do: sale
        amount: '12.00'
        screen: approved
        expect:
          - service: sale
            amount: '12.00'
            status: AUTHORIZED
`;

const PACK = `pack: header
title: The identity in the header
version: '1'
config:
  dcc:
    enabled: false
cases:
${sale('HD-01', '')}${sale(
  'HD-02',
  `    config:
      terminal:
        id: PT000777
`,
)}`;

describe('the header of a certify run', () => {
  it('states the terminal id and partner ids the terminals used', async () => {
    const pack = parsePack(PACK, 'header.yaml', { cards: VIRTUAL_CARD_NAMES });
    const report = await runPack({
      pack,
      packFile: 'header.yaml',
      gateway: 'sandbox',
      config: {
        terminal: { id: 'PT000042', partner: { developerId: '87654321', solutionId: 'LOTSPARK' } },
      },
    });
    expect(report.terminal).toEqual({
      terminalId: 'PT000042, PT000777',
      merchantId: 'testrest',
      country: 'GB',
      currency: 'GBP',
      developerId: '87654321',
      solutionId: 'LOTSPARK',
      thirdPartyCertificationNumber: 'PT0000000001',
    });
    expect(report.cases.map((c) => c.problems)).toEqual([[], []]);
    expect(report.cases.map((c) => [c.id, c.verdict, c.terminal?.terminalId])).toEqual([
      ['HD-01', 'passed', 'PT000042'],
      ['HD-02', 'passed', 'PT000777'],
    ]);
    expect(report.gateway).toEqual({ kind: 'sandbox', url: 'embedded sandbox', credentials: 'sandbox' });
  }, 120_000);
});

describe('a case asked for twice', () => {
  it('is run and counted once', async () => {
    const pack = parsePack(PACK, 'header.yaml', { cards: VIRTUAL_CARD_NAMES });
    const report = await runPack({
      pack,
      packFile: 'header.yaml',
      gateway: 'sandbox',
      caseIds: ['HD-01', 'HD-01'],
    });
    expect(report.cases.map((c) => c.id)).toEqual(['HD-01']);
    expect(report.summary).toMatchObject({ cases: 1, passed: 1 });
  }, 120_000);
});
