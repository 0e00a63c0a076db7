import { selectRulePacks, type ValidationResult } from '../../../src/validation';
import { corpusFile } from '../../support/corpus';
import { requirePacks, validator } from './support';

// Packs load on first use (a SEF of several MB) and a machine under load validates slower.
jest.setTimeout(180_000);

/**
 * Peppol PINT: the corpus has no PINT sample (OpenPeppol does not allow redistribution), so a BIS 3 invoice is
 * re-labelled as PINT and the base PINT rule on the seller's electronic address is exercised both ways.
 */

const BIS3 = corpusFile('en16931/ubl-examples/BIS3_Invoice_positive.XML').toString('utf8');
const SELLER_ENDPOINT = '<cbc:EndpointID schemeID="0184">DK12345678</cbc:EndpointID>';

function asPint(customizationId: string, xml = BIS3): string {
  const out = xml
    .replace(/<cbc:CustomizationID>[^<]*</, `<cbc:CustomizationID>${customizationId}<`)
    .replace(/<cbc:ProfileID>[^<]*</, '<cbc:ProfileID>urn:peppol:bis:billing<');
  if (!out.includes(customizationId)) throw new Error('CustomizationID not replaced');
  return out;
}

function ruleIds(r: ValidationResult): string[] {
  return r.assertions.filter((a) => a.flag === 'error').map((a) => a.ruleId);
}

describe('Peppol PINT', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'pint', 'pint-eu']));

  it.each([
    ['urn:peppol:pint:billing-1@eu-1', 'pint-eu-ubl-invoice', 'pint-eu'],
    ['urn:peppol:pint:billing-1', 'pint-ubl-invoice', 'pint'],
  ])('%s is validated with %s rules and ibr-081 guards the seller electronic address', async (cid, format, pack) => {
    const withEndpoint = await validator().validate(Buffer.from(asPint(cid)));
    expect(withEndpoint.format.id).toBe(format);
    expect(withEndpoint.ruleSets.map((s) => s.id)).toEqual(['ubl-2.1', pack]);
    expect(ruleIds(withEndpoint)).not.toContain('ibr-081');

    const without = await validator().validate(Buffer.from(asPint(cid, BIS3.replace(SELLER_ENDPOINT, ''))));
    expect(without.isValid).toBe(false);
    expect(without.assertions.filter((a) => a.ruleId === 'ibr-081').map((a) => [a.flag, a.reasonCode])).toEqual([
      ['error', 'BV'],
    ]);
  });

  it('maps every jurisdiction to its package, and refuses self-billing without a jurisdiction', () => {
    const fmt = (id: string) => ({
      id,
      name: id,
      syntax: 'UBL' as const,
      documentType: 'Invoice' as const,
      urn: '',
      rootName: 'Invoice',
      rootNamespace: '',
    });
    expect(selectRulePacks(fmt('pint-jp-nontax-ubl-invoice')).packs.map((p) => p.id)).toEqual([
      'ubl-2.1',
      'pint-jp-nontax',
    ]);
    expect(selectRulePacks(fmt('pint-aunz-selfbilling-ubl-creditnote')).packs.map((p) => p.id)).toEqual([
      'ubl-2.1',
      'pint-aunz-selfbilling',
    ]);
    expect(selectRulePacks(fmt('pint-sg-ubl-invoice')).packs.map((p) => p.id)).toEqual(['ubl-2.1', 'pint-sg']);
    expect(() => selectRulePacks(fmt('pint-selfbilling-ubl-invoice'))).toThrow(/jurisdiction/);
  });
});
