import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { focusedTestId } from './accessibility-scripts.js';
import { launchBrowser, type LaunchedBrowser } from './browser.js';
import { checkCustomerScreen, operatorFigures } from './customer-screen-checks.js';
import { CustomerWalk, MODEL_CONFIGS } from './journeys.js';
import { startTerminal, type RunningTerminal } from './terminal-process.js';

/**
 * A standalone credit on the real attended terminal, in a real browser: money out to the card presented, linked to no
 * sale, so it starts only with the operator PIN typed beside its button. A wrong PIN is refused in operator mode's
 * words, nothing starts; the right one asks for the amount, then the card, and the sandbox ledger shows the credit.
 * Every screen passes the checks a customer screen must pass (axe-core's WCAG AA, no operator figure: the PIN never
 * shows).
 */

let terminal: RunningTerminal;
let launched: LaunchedBrowser;

beforeAll(async () => {
  terminal = await startTerminal(MODEL_CONFIGS.attended);
  launched = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await launched?.close();
  await terminal?.stop();
});

interface LedgerTx {
  kind: string;
  status: string;
  amounts: { requested: number };
}

describe('a standalone credit on the attended terminal', () => {
  it('starts only with the operator PIN: a wrong one refused, the right one asks for the amount, then the card', async () => {
    const failures: string[] = [];
    const expected = {
      locale: 'en_GB',
      accessible: false,
      operatorFigures: operatorFigures(terminal),
      terminalId: terminal.terminalId,
    } as const;
    const walk = await CustomerWalk.open(launched.browser, terminal.url, {
      locale: 'en_GB',
      accessible: false,
      visit: async (page, stop) => {
        failures.push(...(await checkCustomerScreen(page, stop, expected)));
      },
    });
    try {
      await walk.arrive();
      const pin = walk.page.getByTestId('credit-pin');
      expect(await pin.getAttribute('type')).toBe('password');
      // Named by a label the attendant sees, not only by a name for screen readers.
      expect(await walk.page.getByText('Operator PIN', { exact: true }).isVisible()).toBe(true);
      expect(await walk.page.getByLabel('Operator PIN', { exact: true }).getAttribute('data-testid')).toBe(
        'credit-pin',
      );

      // Credit with no PIN typed sends nothing: the attendant is put in the field.
      await walk.page.getByTestId('action-CREDIT').click();
      await expect.poll(() => walk.page.evaluate(focusedTestId)).toBe('credit-pin');
      expect(await walk.page.getByTestId('customer').getAttribute('data-screen')).toBe('idle');

      await pin.fill(terminal.pin === '00000000' ? '11111111' : '00000000');
      await walk.press('action-CREDIT');
      await expect.poll(() => walk.page.getByTestId('problem').textContent()).toBe('wrong operator PIN');
      expect(await walk.page.getByTestId('customer').getAttribute('data-screen')).toBe('idle');
      failures.push(
        ...(await checkCustomerScreen(walk.page, { screen: 'idle', step: 'wrong-pin' }, expected)),
      );

      await walk.page.getByTestId('credit-pin').fill(terminal.pin);
      await walk.press('action-CREDIT');
      await walk.reach('enter-amount');
      expect(await walk.page.getByTestId('customer-message').textContent()).toBe(
        'Enter the amount to credit',
      );
      for (const digit of '500') await walk.press(`amount-key-${digit}`);
      await walk.press('action-ENTER_AMOUNT');
      await walk.reach('confirm');
      await walk.press('action-CONFIRM');
      await walk.reach('approved');
      await walk.press('action-DONE');
      await walk.reach('idle', 'idle', false);
    } finally {
      await walk.close();
    }
    expect(failures).toEqual([]);
    const ledger = (await (await fetch(`${terminal.sandboxUrl}/__sandbox/ledger`)).json()) as {
      transactions: LedgerTx[];
    };
    expect(ledger.transactions.map((t) => [t.kind, t.amounts.requested])).toEqual([['credit', 500]]);
  });
});
