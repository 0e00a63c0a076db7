import { readInvoiceRouting } from '../../../src/peppol/invoice-routing';
import { corpusFile, SAMPLE_CII_INVOICE, SAMPLE_UBL_INVOICE } from '../../support/corpus';

const BIS3 = corpusFile('en16931/unit-tests/testfiles/BIS_Billing_30-Telefoni.xml').toString('utf8');
const BUYER_UBL = '<cbc:EndpointID schemeID="0007">2244668800</cbc:EndpointID>';

/** The CII example with seller and buyer electronic addresses added where the schema puts them. */
function ciiWith(seller: string, buyer: string): Buffer {
  const xml = corpusFile(SAMPLE_CII_INVOICE).toString('utf8');
  const at = (s: string, from: number) =>
    s.indexOf('</ram:PostalTradeAddress>', from) + '</ram:PostalTradeAddress>'.length;
  const first = at(xml, 0);
  const withSeller = `${xml.slice(0, first)}${seller}${xml.slice(first)}`;
  const second = at(withSeller, first + seller.length);
  return Buffer.from(`${withSeller.slice(0, second)}${buyer}${withSeller.slice(second)}`);
}
const uri = (scheme: string, value: string) =>
  `<ram:URIUniversalCommunication><ram:URIID schemeID="${scheme}">${value}</ram:URIID></ram:URIUniversalCommunication>`;

describe('readInvoiceRouting', () => {
  it('reads buyer (BT-49), seller (BT-34) and seller country from a UBL invoice', () => {
    expect(readInvoiceRouting(Buffer.from(BIS3))).toEqual({
      ok: true,
      receiver: { scheme: 'iso6523-actorid-upis', value: '0007:2244668800' },
      sender: { scheme: 'iso6523-actorid-upis', value: '0007:5566778899' },
      countryC1: 'SE',
    });
  });

  it('reads the same from CII URIUniversalCommunication/URIID', () => {
    expect(readInvoiceRouting(ciiWith(uri('0106', '57151520'), uri('0106', '10202000')))).toEqual({
      ok: true,
      receiver: { scheme: 'iso6523-actorid-upis', value: '0106:10202000' },
      sender: { scheme: 'iso6523-actorid-upis', value: '0106:57151520' },
      countryC1: 'NL',
    });
  });

  it('refuses a missing buyer EndpointID, naming the element (UBL and CII)', () => {
    expect(readInvoiceRouting(corpusFile(SAMPLE_UBL_INVOICE))).toEqual({
      ok: false,
      code: 'ENDPOINT_MISSING',
      message: 'the invoice has no buyer EndpointID cac:AccountingCustomerParty/cac:Party/cbc:EndpointID (BT-49)',
    });
    expect(readInvoiceRouting(ciiWith(uri('0106', '57151520'), ''))).toMatchObject({
      ok: false,
      code: 'ENDPOINT_MISSING',
      message: expect.stringContaining('ram:BuyerTradeParty/ram:URIUniversalCommunication/ram:URIID (BT-49)'),
    });
  });

  it('refuses a missing seller EndpointID', () => {
    expect(readInvoiceRouting(ciiWith('', uri('0106', '10202000')))).toMatchObject({
      ok: false,
      code: 'ENDPOINT_MISSING',
      message: expect.stringContaining('seller EndpointID'),
    });
  });

  it.each([
    ['no schemeID', '<cbc:EndpointID>2244668800</cbc:EndpointID>', /has no schemeID/],
    [
      'a scheme that is not an ICD',
      '<cbc:EndpointID schemeID="EM">buyer@example.com</cbc:EndpointID>',
      /schemeID "EM", not a 4-digit ISO 6523 ICD/,
    ],
    [
      'characters outside POLICY 1',
      '<cbc:EndpointID schemeID="0106">1234 5678</cbc:EndpointID>',
      /not a valid Peppol participant identifier/,
    ],
  ])('refuses a buyer EndpointID with %s', (_what, element, message) => {
    const out = readInvoiceRouting(Buffer.from(BIS3.replace(BUYER_UBL, element)));
    expect(out).toMatchObject({ ok: false, code: 'ENDPOINT_INVALID' });
    expect(out.ok ? '' : out.message).toMatch(message);
  });

  it('refuses a seller without a country code, and a document that is not an invoice', () => {
    const noCountry = BIS3.replace('<cbc:IdentificationCode>SE</cbc:IdentificationCode>', '');
    expect(readInvoiceRouting(Buffer.from(noCountry))).toMatchObject({ ok: false, code: 'COUNTRY_MISSING' });
    expect(
      readInvoiceRouting(Buffer.from('<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"/>')),
    ).toMatchObject({ ok: false, code: 'NOT_AN_INVOICE' });
  });
});
