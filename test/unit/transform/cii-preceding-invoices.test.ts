import { transformDocument } from '../../../src/transform';
import { corpusFile } from '../../support/corpus';
import { requirePacks } from '../validation/support';
import { errorsOf } from './support';

jest.setTimeout(180_000);

/**
 * BG-3 repeats in EN 16931 and UBL, while CII D16B holds one ram:InvoiceReferencedDocument in the header settlement:
 * the CII writer carries the first and reports the others as not carried, so the output stays schema-valid.
 */

/** The CEN example invoice with a preceding invoice reference, given a second one. */
function withTwoPrecedingInvoices(): string {
  const xml = corpusFile('en16931/ubl-examples/ubl-tc434-example5.xml').toString('utf8');
  const first = /<cac:BillingReference>[\s\S]*?<\/cac:BillingReference>/.exec(xml)?.[0];
  if (!first) throw new Error('the example has no BillingReference');
  const second = first.replace('TOSL109', 'TOSL110').replace('2013-03-10', '2013-03-11');
  return xml.replace(first, `${first}\n    ${second}`);
}

describe('CII writer: repeated preceding invoice references (BG-3)', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'en16931-ubl', 'cii-d16b', 'en16931-cii']));

  it('the source with two BillingReferences is a valid EN 16931 UBL invoice', async () => {
    expect(await errorsOf(withTwoPrecedingInvoices())).toEqual({ format: 'en16931-ubl-invoice', errors: [] });
  });

  it('converts to CII carrying the first, reports the second, and the result passes the CII schema and rules', async () => {
    const out = transformDocument(withTwoPrecedingInvoices(), { targetFormat: 'en16931-cii' });
    expect(out.xml.match(/<ram:InvoiceReferencedDocument>/g)).toHaveLength(1);
    expect(out.xml).toMatch(/<ram:InvoiceReferencedDocument>\s*<ram:IssuerAssignedID>TOSL109</);
    expect(out.report.notCarried).toEqual([
      'BG-3 preceding invoice reference "TOSL110" issued 2013-03-11: CII D16B holds one ' +
        'ram:InvoiceReferencedDocument in the header settlement, which carries the first ("TOSL109")',
    ]);
    expect(await errorsOf(out.xml)).toEqual({ format: 'en16931-cii', errors: [] });
  });

  it('writing both would break the CII D16B schema (why only one is carried)', async () => {
    const out = transformDocument(withTwoPrecedingInvoices(), { targetFormat: 'en16931-cii' });
    const doc = /<ram:InvoiceReferencedDocument>[\s\S]*?<\/ram:InvoiceReferencedDocument>/.exec(out.xml)![0];
    const both = out.xml.replace(doc, `${doc}${doc.replace('TOSL109', 'TOSL110')}`);
    const r = await errorsOf(both);
    expect(r.errors).toEqual([expect.stringMatching(/InvoiceReferencedDocument/)]);
  });
});
