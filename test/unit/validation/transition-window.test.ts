import { createValidator } from '../../../src/validation';
import { corpusFile } from '../../support/corpus';
import { RULES_DIR, requirePacks, validator } from './support';

// Packs load on first use (a SEF of several MB) and a machine under load validates slower.
jest.setTimeout(180_000);

/**
 * The dual-version window: while config accepts a previous pack version, a document is validated against both and
 * passes a pack when it passes either. Peppol BIS Billing 3.0.21 (2026.5) made PEPPOL-COMMON-R052 (a Danish P-number,
 * scheme 0096, has 10 digits) fatal; in 3.0.20 (2025.11) it was a warning.
 */

const BIS3 = corpusFile('en16931/ubl-examples/BIS3_Invoice_positive.XML').toString('utf8');
const SHORT_P_NUMBER = BIS3.replace(
  '<cbc:EndpointID schemeID="0184">DK12345678</cbc:EndpointID>',
  '<cbc:EndpointID schemeID="0096">123456</cbc:EndpointID>',
);
const PREVIOUS = ['peppol-bis3-ubl@2025.11', 'peppol-cen-en16931-ubl@2025.11'];

describe('transition window (RULES_ACCEPTED_PREVIOUS)', () => {
  beforeAll(() => {
    expect(SHORT_P_NUMBER).not.toBe(BIS3);
    requirePacks(['ubl-2.1', 'peppol-cen-en16931-ubl', 'peppol-bis3-ubl']);
  });

  it('without a window, the current version decides', async () => {
    const r = await validator().validate(Buffer.from(SHORT_P_NUMBER));
    expect(r.isValid).toBe(false);
    expect(r.assertions.filter((a) => a.flag === 'error').map((a) => a.ruleId)).toEqual(['PEPPOL-COMMON-R052']);
    expect(r.ruleSets.map((s) => `${s.id}@${s.version}`)).toEqual([
      'ubl-2.1@2.1',
      'peppol-cen-en16931-ubl@2026.5',
      'peppol-bis3-ubl@2026.5',
    ]);
  });

  it('with the previous version accepted, validates against both and reports which passed', async () => {
    const v = createValidator({ rulesDir: RULES_DIR, acceptedPrevious: PREVIOUS });
    const r = await v.validate(Buffer.from(SHORT_P_NUMBER));
    expect(r.ruleSets).toEqual([
      { id: 'ubl-2.1', version: '2.1', outcome: 'passed' },
      { id: 'peppol-cen-en16931-ubl', version: '2026.5', outcome: 'passed', engine: 'compiled' },
      { id: 'peppol-cen-en16931-ubl', version: '2025.11', outcome: 'passed', engine: 'compiled' },
      { id: 'peppol-bis3-ubl', version: '2026.5', outcome: 'failed', engine: 'compiled' },
      { id: 'peppol-bis3-ubl', version: '2025.11', outcome: 'passed', engine: 'compiled' },
    ]);
    expect(r.isValid).toBe(true);
    // The sender still sees what the current version asks for, to fix before the window closes.
    expect(r.assertions.filter((a) => a.flag === 'error').map((a) => [a.ruleId, a.ruleSet])).toEqual([
      ['PEPPOL-COMMON-R052', 'peppol-bis3-ubl'],
    ]);

    const fine = await v.validate(Buffer.from(BIS3));
    expect(fine.isValid).toBe(true);
    expect(fine.ruleSets.every((s) => s.outcome === 'passed')).toBe(true);
  });

  it('a document failing both versions stays invalid', async () => {
    const v = createValidator({ rulesDir: RULES_DIR, acceptedPrevious: PREVIOUS });
    const r = await v.validate(
      Buffer.from(BIS3.replace('<cbc:EndpointID schemeID="0184">DK12345678</cbc:EndpointID>', '')),
    );
    expect(r.isValid).toBe(false);
    expect(r.ruleSets.filter((s) => s.id === 'peppol-bis3-ubl').map((s) => s.outcome)).toEqual(['failed', 'failed']);
  });

  it('an explicit ruleSet may name the previous version', async () => {
    const r = await validator().validate(Buffer.from(SHORT_P_NUMBER), { ruleSet: 'peppol-bis3-ubl@2025.11' });
    expect(r.ruleSets).toEqual([{ id: 'peppol-bis3-ubl', version: '2025.11', outcome: 'passed', engine: 'compiled' }]);
    expect(r.isValid).toBe(true);
  });

  it('refuses a misconfigured window at start-up', () => {
    expect(() => createValidator({ rulesDir: RULES_DIR, acceptedPrevious: ['peppol-bis3-ubl@2019.1'] })).toThrow(
      /not a pack version in the rules manifest/,
    );
    expect(() => createValidator({ rulesDir: RULES_DIR, acceptedPrevious: ['peppol-bis3-ubl@2026.5'] })).toThrow(
      /current version/,
    );
    expect(() => createValidator({ rulesDir: RULES_DIR, acceptedPrevious: ['peppol-bis3-ubl'] })).toThrow(/id@version/);
  });
});
