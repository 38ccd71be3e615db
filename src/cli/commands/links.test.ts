import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { AuditStore, openJournal, PaymentLinkStore } from '../../journal/index.js';
import { migrate, schemaVersion } from '../../journal/migrations/index.js';
import { startSandbox, type Sandbox } from '../../sandbox/index.js';
import { createSignedClient } from '../../sandbox/testing/signed-client.js';
import { main } from '../main.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(() => sandbox.close());

function terminalDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'links-cli-'));
  writeFileSync(join(dir, 'terminal.json'), JSON.stringify({ journal: { path: 'var/j.db' } }));
  return dir;
}

async function run(dir: string, args: string[]): Promise<{ code: number; out: Record<string, unknown> }> {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c: Buffer) => (text += c.toString()));
  const code = await main(['links', ...args, '--config', 'terminal.json', '--gateway', sandbox.url], {
    stdout,
    stderr: new PassThrough(),
    cwd: dir,
    signal: new AbortController().signal,
  });
  return { code, out: JSON.parse(text) as Record<string, unknown> };
}

async function createLink(id: string): Promise<void> {
  const created = await createSignedClient(sandbox.url).send('POST', '/ipl/v2/payment-links', {
    processingInformation: { linkType: 'PURCHASE' },
    purchaseInformation: { purchaseNumber: id },
    orderInformation: {
      amountDetails: { currency: 'GBP', totalAmount: '4.50' },
      lineItems: [{ productName: 'Parking', unitPrice: '4.50', productSku: 'ZONE-A' }],
    },
  });
  expect(created.status).toBe(201);
}

beforeEach(() => sandbox.reset());

describe('parking-terminal links', () => {
  it('lists the links a page at a time with offset and limit', async () => {
    for (const id of ['L-1', 'L-2', 'L-3']) await createLink(id);
    const dir = terminalDir();
    const first = await run(dir, ['list', '--limit', '2', '--json']);
    expect(first.code).toBe(0);
    expect(first.out).toMatchObject({ offset: 0, limit: 2, totalLinks: 3, next: { offset: 2, limit: 2 } });
    expect((first.out.links as Array<{ id: string }>).map((l) => l.id)).toEqual(['L-1', 'L-2']);
    const second = await run(dir, ['list', '--offset', '2', '--limit', '2']);
    expect((second.out.links as Array<{ id: string }>).map((l) => l.id)).toEqual(['L-3']);
    expect(second.out.next).toBeUndefined();
    expect(second.out.links).toEqual([
      expect.objectContaining({
        status: 'ACTIVE',
        amountMinor: 450,
        currency: 'GBP',
        url: `${sandbox.url}/pay/L-3`,
      }),
    ]);
  });

  it('deactivates and reactivates a link, keeping its fields, and records both in the audit log', async () => {
    await createLink('L-9');
    const dir = terminalDir();
    // The terminal created L-9: its journal knows it.
    const journal = openJournal(join(dir, 'var/j.db'));
    const store = new PaymentLinkStore(journal);
    store.begin({
      linkId: 'L-9',
      reference: 'T-9',
      purpose: 'fee',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: 1,
    });
    store.activated('L-9', `${sandbox.url}/pay/L-9`);
    journal.close();

    const off = await run(dir, ['deactivate', 'L-9']);
    expect(off.code).toBe(0);
    expect(off.out.link).toMatchObject({
      id: 'L-9',
      status: 'INACTIVE',
      terminal: { state: 'deactivated', closeReason: 'operator', reference: 'T-9' },
    });
    const shown = await run(dir, ['show', 'L-9']);
    expect(shown.out.link).toMatchObject({
      status: 'INACTIVE',
      lineItems: [expect.objectContaining({ productName: 'Parking', productSku: 'ZONE-A' })],
    });
    const on = await run(dir, ['reactivate', 'L-9']);
    expect(on.out.link).toMatchObject({ status: 'ACTIVE', terminal: { state: 'active' } });

    const check = openJournal(join(dir, 'var/j.db'));
    const records = new AuditStore(check).list();
    check.close();
    expect(records.map((r) => `${r.actor}:${r.action}:${r.subject ?? ''}:${r.result}`)).toEqual([
      'operator:link-deactivate:L-9:ok',
      'operator:link-reactivate:L-9:ok',
    ]);
  });

  it('lists and shows with the journal opened read-only: no migration beside a terminal of an older schema', async () => {
    await createLink('L-7');
    const dir = terminalDir();
    // A running terminal's journal at schema 8 (payment links), which this version's migrations would change.
    mkdirSync(join(dir, 'var'));
    const db = new Database(join(dir, 'var/j.db'));
    db.pragma('journal_mode = WAL');
    migrate(db, 8);
    const store = new PaymentLinkStore({
      db,
      atomically: (_full, fn) => db.transaction(fn)(),
      now: () => new Date(),
    });
    store.begin({
      linkId: 'L-7',
      reference: 'T-7',
      purpose: 'fee',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: 1,
    });
    store.activated('L-7', `${sandbox.url}/pay/L-7`);

    const shown = await run(dir, ['show', 'L-7']);
    expect(shown.out).toMatchObject({ link: { id: 'L-7', terminal: { state: 'active', reference: 'T-7' } } });
    expect(shown.code).toBe(0);
    const listed = await run(dir, ['list']);
    expect(listed.out.links).toMatchObject([{ id: 'L-7', terminal: { state: 'active', reference: 'T-7' } }]);
    expect(schemaVersion(db)).toBe(8);
    db.close();
  });

  it('refuses to reactivate a paid link of this terminal: a payment link is paid once', async () => {
    await createLink('L-8');
    const dir = terminalDir();
    const journal = openJournal(join(dir, 'var/j.db'));
    const store = new PaymentLinkStore(journal);
    store.begin({
      linkId: 'L-8',
      reference: 'T-8',
      purpose: 'pay-later',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: 1,
    });
    store.activated('L-8', `${sandbox.url}/pay/L-8`);
    store.paid('L-8', '7000000000000000000008');
    journal.close();
    expect((await run(dir, ['deactivate', 'L-8'])).out.link).toMatchObject({
      status: 'INACTIVE',
      terminal: { state: 'paid', gatewayInactive: true },
    });

    const on = await run(dir, ['reactivate', 'L-8']);
    expect(on).toMatchObject({ code: 1, out: { error: { code: 'LINK_NOT_ALLOWED' } } });
    // Nothing changed at the gateway nor in the journal: the link cannot be paid a second time.
    expect((await run(dir, ['show', 'L-8'])).out.link).toMatchObject({
      status: 'INACTIVE',
      terminal: { state: 'paid', paymentId: '7000000000000000000008', gatewayInactive: true },
    });
    const check = openJournal(join(dir, 'var/j.db'));
    const records = new AuditStore(check).list();
    check.close();
    expect(records.map((r) => `${r.action}:${r.subject ?? ''}:${r.result}:${r.code ?? ''}`)).toEqual([
      'link-deactivate:L-8:ok:operator',
      'link-reactivate:L-8:refused:LINK_NOT_ALLOWED',
    ]);
  });

  it("refuses to reactivate a link of this terminal's id that its journal does not know: it may have been paid", async () => {
    // PT000001 made this link and its customer paid it; the command runs where the terminal's journal is not (another
    // directory), or the journal lost it: nothing here can tell that it was paid.
    await createLink('PT000001_T-5');
    const dir = terminalDir();
    expect((await run(dir, ['deactivate', 'PT000001_T-5'])).out.link).toMatchObject({ status: 'INACTIVE' });

    const on = await run(dir, ['reactivate', 'PT000001_T-5']);
    expect(on).toMatchObject({ code: 1, out: { error: { code: 'LINK_NOT_ALLOWED' } } });
    expect((await run(dir, ['show', 'PT000001_T-5'])).out.link).toMatchObject({ status: 'INACTIVE' });
    // A journal that has no record of it says no more.
    openJournal(join(dir, 'var/j.db')).close();
    expect(await run(dir, ['reactivate', 'PT000001_T-5'])).toMatchObject({
      code: 1,
      out: { error: { code: 'LINK_NOT_ALLOWED' } },
    });
    // A link of another terminal's id stays the operator's to change.
    await createLink('PT000002_T-5');
    await run(dir, ['deactivate', 'PT000002_T-5']);
    expect((await run(dir, ['reactivate', 'PT000002_T-5'])).out.link).toMatchObject({ status: 'ACTIVE' });
  });

  it("does not take a link whose create the gateway refused this terminal for its own: it is another terminal's", async () => {
    // Before terminal ids were in link ids: another terminal of the merchant made L-7 first; this one's create of the
    // same id was refused (DUPLICATE_RECORD) and journaled failed.
    await createLink('L-7');
    const dir = terminalDir();
    const journal = openJournal(join(dir, 'var/j.db'));
    const store = new PaymentLinkStore(journal);
    store.begin({
      linkId: 'L-7',
      reference: 'T-7',
      purpose: 'fee',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: 1,
    });
    store.failed('L-7', 'GW_INVALID_REQUEST: DUPLICATE_RECORD');
    journal.close();

    const listed = await run(dir, ['list']);
    expect(listed.out.links).toEqual([expect.objectContaining({ id: 'L-7', status: 'ACTIVE' })]);
    expect((listed.out.links as Array<Record<string, unknown>>)[0]?.terminal).toBeUndefined();
    const shown = await run(dir, ['show', 'L-7']);
    expect(shown.out.link).toMatchObject({ id: 'L-7', status: 'ACTIVE' });
    expect((shown.out.link as Record<string, unknown>).terminal).toBeUndefined();
    // The operator may still deactivate it as a link of the merchant; the journal does not make it this terminal's.
    const off = await run(dir, ['deactivate', 'L-7']);
    expect(off.out.link).toMatchObject({ id: 'L-7', status: 'INACTIVE' });
    expect((off.out.link as Record<string, unknown>).terminal).toBeUndefined();
    const check = openJournal(join(dir, 'var/j.db'));
    const after = new PaymentLinkStore(check).get('L-7');
    check.close();
    expect(after).toMatchObject({ state: 'failed', gatewayInactive: false });
    expect(after?.closeReason).toBeUndefined();
  });

  it('prints the last failure the terminal kept of its link escaped and bounded, as the gateway’s own fields', async () => {
    await createLink('L-6');
    const dir = terminalDir();
    const journal = openJournal(join(dir, 'var/j.db'));
    const store = new PaymentLinkStore(journal);
    store.begin({
      linkId: 'L-6',
      reference: 'T-6',
      purpose: 'fee',
      amountMinor: 450,
      currency: 'GBP',
      watchUntilMs: 1,
    });
    store.activated('L-6', `${sandbox.url}/pay/L-6`);
    // A gateway error's message quoting what the gateway answered: a bidi override, a terminal escape, a long tail.
    store.noteError('L-6', `GW_INVALID_REQUEST: L-6\u202E6-L\u001b[2J ${'x'.repeat(400)}`);
    journal.close();

    for (const args of [['show', 'L-6'], ['list']]) {
      const { out } = await run(dir, args);
      const link = (out.link ?? (out.links as unknown[])[0]) as { terminal?: { lastError?: string } };
      const lastError = link.terminal?.lastError ?? '';
      expect(lastError, args.join(' ')).toMatch(/^GW_INVALID_REQUEST: L-6\\u\{202E\}6-L\\u\{001B\}\[2J x/);
      expect(lastError.length, args.join(' ')).toBeLessThanOrEqual(160);
    }
  });

  it('answers exit 1 with an error document for an unknown link, exit 2 for bad input', async () => {
    const dir = terminalDir();
    const missing = await run(dir, ['show', 'NOPE']);
    expect(missing).toMatchObject({ code: 1, out: { error: { code: 'LINK_NOT_FOUND' } } });
    expect((await run(dir, ['deactivate'])).code).toBe(2);
    expect((await run(dir, ['list', '--limit', '1001'])).out).toMatchObject({
      error: { code: 'BAD_ARGUMENTS' },
    });
    expect((await run(dir, ['show', 'a/b'])).code).toBe(2);
    // A dot segment is normalized away by any URL parser on the way (`/ipl/v2/payment-links/..` is `/ipl/v2/`):
    // it would name another resource of the gateway, never a link.
    for (const id of ['.', '..', '...'])
      expect(await run(dir, ['deactivate', id]), id).toMatchObject({
        code: 2,
        out: { error: { code: 'BAD_ARGUMENTS' } },
      });
    expect((await run(dir, ['list', '--status', 'PAID'])).code).toBe(2);
  });
});
