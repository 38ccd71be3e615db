import { afterEach, describe, expect, it } from 'vitest';
import { closeHosts, startHost } from '../../test/integration/host-harness.js';
import type { TerminalSnapshot } from './api.js';
import { send, waitFor } from './drive.js';

afterEach(closeHosts);

describe('the customer language', () => {
  it('changes the texts of the current screen on SET_LANGUAGE and returns to terminal.locale after the session', async () => {
    const host = await startHost();
    const idle = await waitFor(host, ['idle'], 15_000);
    expect(idle.customer.title).toBe('Welcome');
    expect(idle.customer.language).toMatchObject({ current: 'en_GB', lang: 'en-GB', direction: 'ltr' });
    expect(idle.customer.language?.available.map((l) => l.name)).toContain('Deutsch');
    // Each language's BCP 47 tag, for the renderer's `lang` attributes (it may not import src/i18n).
    expect(idle.customer.language?.available).toContainEqual({
      locale: 'de_DE',
      name: 'Deutsch',
      lang: 'de-DE',
    });
    expect(idle.customer.labels?.['action.START']).toBe('Pay for parking');

    await send(host, { type: 'START' });
    const german = await send(host, { type: 'SET_LANGUAGE', locale: 'de_DE' });
    expect(german.customer.screen).toBe('enter-ticket');
    expect(german.customer.title).toBe('Ihr Ticket');
    expect(german.customer.message).toContain('Ticket einstecken oder Kennzeichen eingeben');
    expect(german.customer.labels?.['action.CANCEL']).toBe('Abbrechen');

    await send(host, { type: 'LOST_TICKET' });
    const confirm = (await host.snapshot()) as { ok: true; value: TerminalSnapshot };
    expect(confirm.value.customer.title).toBe('Bitte bestätigen');
    expect(confirm.value.customer.amount?.text).toMatch(/^\d+,\d\d\s£$/);

    const arabic = await send(host, { type: 'SET_LANGUAGE', locale: 'ar-AE' });
    expect(arabic.customer.language).toMatchObject({ current: 'ar_AE', lang: 'ar-AE', direction: 'rtl' });
    expect(arabic.customer.title).toBe('يرجى التأكيد');

    await send(host, { type: 'CANCEL' });
    const after = await waitFor(host, ['idle'], 15_000);
    expect(after.customer.language?.current).toBe('en_GB');
    expect(after.customer.title).toBe('Welcome');
  });

  it('refuses an unknown locale with BAD_LOCALE and changes nothing', async () => {
    const host = await startHost({ terminal: { locale: 'fr-FR' } });
    const idle = await waitFor(host, ['idle'], 15_000);
    expect(idle.customer.title).toBe('Bienvenue');
    const r = await host.send({ type: 'SET_LANGUAGE', locale: 'xx_XX' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('BAD_LOCALE');
    const still = await host.snapshot();
    expect(still.ok && still.value.customer.language?.current).toBe('fr_FR');
  });
});
