import { describe, expect, it } from 'vitest';
import { maskCardData, maskEmvTags, maskText, maskTrackData } from './mask.js';

describe('maskCardData', () => {
  it('keeps the BIN and the last four digits of the PAN in track data, nothing else of the track', () => {
    expect(maskTrackData(';4761739001010119=30122011234567890?')).toBe(
      ';476173******0119=*****************?',
    );
    expect(maskTrackData('%B5413339000001513^CARDHOLDER/MC^3012101?')).toBe(
      '%B541333******1513^' + '*'.repeat(21) + '?',
    );
  });

  it('stars the values of card-data tags and leaves every other tag readable', () => {
    // 9F02 amount, then 5A (PAN) which must never be sent: its value goes, its tag and length stay.
    const masked = maskEmvTags('9F020600000000250' + '05A084761739001010119');
    expect(masked).toBe('9F02060000000025005A08****************');
  });

  it('stars card-data tags inside a constructed template as well', () => {
    // 70 (template) holding 5A (PAN) and 9F02: the PAN goes, the template and the amount stay readable.
    const masked = maskEmvTags('7013' + '5A084761739001010119' + '9F0206000000002500');
    expect(masked).toBe('7013' + '5A08' + '*'.repeat(16) + '9F0206000000002500');
  });

  it('masks track 2 equivalent data (the D separator of tag 57) in trackData', () => {
    const out = maskCardData({ pointOfSaleInformation: { trackData: '4761739001010119D30122011234567890' } });
    expect(out).toEqual({ pointOfSaleInformation: { trackData: '476173******0119D' + '*'.repeat(17) } });
  });

  it('scrubs tags it cannot read whole', () => {
    expect(maskEmvTags('9F0206000000')).not.toContain('000000');
  });

  it('masks a Luhn-valid card number anywhere and keeps gateway ids, dates and reconciliation ids', () => {
    expect(maskText('card 4761739001010119 declined')).toBe('card 476173******0119 declined');
    expect(maskText('7012345678901234567890')).toBe('7012345678901234567890'); // a 22-digit gateway id
    expect(maskText('20261124085432')).toBe('20261124085432');
  });

  it('masks by field name and keeps the structure', () => {
    const out = maskCardData({
      paymentInformation: { card: { number: '4761739001010119', securityCode: '123', type: '001' } },
      pointOfSaleInformation: { trackData: ';4761739001010119=3012201?', emv: { tags: '9A03261124' } },
      id: '7012345678901234567890',
    });
    expect(out).toEqual({
      paymentInformation: { card: { number: '476173******0119', securityCode: '***', type: '001' } },
      pointOfSaleInformation: { trackData: ';476173******0119=*******?', emv: { tags: '9A03261124' } },
      id: '7012345678901234567890',
    });
  });
});
