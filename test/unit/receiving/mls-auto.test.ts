import { rejectionLines, MAX_MLS_LINES } from '../../../src/receiving/mls-auto';
import type { ValidationAssertionInfo } from '../../../src/storage/models';

const assertion = (over: Partial<ValidationAssertionInfo>): ValidationAssertionInfo => ({
  artifact: 'a',
  flag: 'error',
  ruleId: 'BR-CL-01',
  location: '/Invoice[1]/cbc:InvoiceTypeCode[1]',
  text: '[BR-CL-01] The document type code MUST be coded by the invoice and credit note related code lists',
  reasonCode: 'BV',
  ruleSet: 'en16931-ubl',
  ...over,
});

const INVALID = {
  kind: 'invalid' as const,
  errors: 1,
  reasonCodes: ['BV'],
  ruleIds: ['BR-CL-01'],
  summary: '[BV] BR-CL-01 at /Invoice',
};

describe('rejectionLines', () => {
  it('makes one line per recorded assertion: reason code, rule id, location, text', () => {
    const lines = rejectionLines(INVALID, [
      assertion({}),
      assertion({ flag: 'warning', reasonCode: 'BW', ruleId: 'W1' }),
    ]);
    expect(lines).toEqual([
      {
        reasonCode: 'BV',
        ruleId: 'BR-CL-01',
        location: '/Invoice[1]/cbc:InvoiceTypeCode[1]',
        // The MLS writes `[BR-CL-01] …` itself: the rule is not named twice.
        description: 'The document type code MUST be coded by the invoice and credit note related code lists',
      },
      expect.objectContaining({ reasonCode: 'BW', ruleId: 'W1' }),
    ]);
  });

  it('falls back to the verdict when the record keeps no failure (the validator refused the bytes outright)', () => {
    const sv = { ...INVALID, reasonCodes: ['SV'], ruleIds: ['INVALID_XML'], summary: 'INVALID_XML: not XML' };
    expect(rejectionLines(sv, [])).toEqual([
      { reasonCode: 'SV', ruleId: 'INVALID_XML', description: 'INVALID_XML: not XML' },
    ]);
    // Only warnings kept: a failure line comes first, so the RE is a valid MLS (SCH-MLS-24).
    const lines = rejectionLines(INVALID, [assertion({ flag: 'warning', reasonCode: 'BW', ruleId: 'W1' })]);
    expect(lines.map((l) => l.reasonCode)).toEqual(['BV', 'BW']);
    // Unknown reason codes are not MLS codes: left out.
    expect(rejectionLines(INVALID, [assertion({ reasonCode: 'XX' })]).map((l) => l.reasonCode)).toEqual(['BV']);
  });

  it('keeps at most MAX_MLS_LINES lines', () => {
    const many = Array.from({ length: MAX_MLS_LINES + 5 }, (_, i) => assertion({ ruleId: `R${i}` }));
    expect(rejectionLines(INVALID, many)).toHaveLength(MAX_MLS_LINES);
  });
});
