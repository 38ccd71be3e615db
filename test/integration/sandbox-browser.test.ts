import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type LaunchedBrowser } from '../e2e/browser.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createSignedClient } from '../../src/sandbox/testing/signed-client.js';

let sandbox: Sandbox;
let browser: LaunchedBrowser;

beforeAll(async () => {
  sandbox = await startSandbox();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await sandbox.close();
});

describe('hosted payment page in a real browser', () => {
  it('lets a customer pay a donation link with a test card', async () => {
    const client = createSignedClient(sandbox.url);
    const created = await client.send('POST', '/ipl/v2/payment-links', {
      processingInformation: { linkType: 'DONATION' },
      purchaseInformation: { purchaseNumber: 'D-1' },
      orderInformation: {
        amountDetails: { currency: 'EUR', totalAmount: '5.00', minAmount: '1.00', maxAmount: '50.00' },
        lineItems: [{ productName: 'Parking charity', unitPrice: '5.00' }],
      },
    });
    const url = String((created.body.purchaseInformation as Record<string, unknown>).paymentLink);
    const page = await browser.browser.newPage();
    await page.goto(`${url}?locale=fr_FR`);
    expect(await page.getAttribute('html', 'lang')).toBe('fr-FR');
    await page.fill('#amount', '7.50');
    await page.fill('#cardNumber', '5555 5555 5555 4444');
    await page.fill('#expiry', '12/30');
    await page.fill('#securityCode', '123');
    await page.click('#pay');
    await page.waitForSelector('#result');
    expect(await page.textContent('#result')).toBe('Payment approved');
    expect(await page.textContent('body')).toContain('555555******4444');
    const tx = sandbox.ledger().transactions.find((t) => t.kind === 'link-payment');
    expect(tx).toMatchObject({
      status: 'AUTHORIZED',
      currency: 'EUR',
      amounts: { captured: 750 },
      card: { type: '002' },
    });
  }, 60_000);
});
