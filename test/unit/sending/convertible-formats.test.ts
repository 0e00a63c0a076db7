import { readFileSync } from 'node:fs';
import path from 'node:path';
import { inspectUpload } from '../../../src/documents/detection';
import { detectFormat } from '../../../src/formats';
import { conversionSource } from '../../../src/sending/conversion-source';
import { inProcessTransform, transformDocument } from '../../../src/transform';
import { corpusFile } from '../../support/corpus';
import { svefakturaInvoice } from '../transform/dialect-fixtures';
import { validator } from '../validation/support';

/** Addressed to a public administration by its iPA office code (ICD 0201, a Peppol address). */
const FATTURAPA = readFileSync(path.join(__dirname, '../transform/fatturapa/mixed-natura-pa.xml'));
const EBINTERFACE = corpusFile('ebinterface/ebinterface/ebi60/ebinterface_6p0_sample_ph1.xml');
/** The same ebInterface invoice with the buyer's GLN (instead of the biller's id for it): its Peppol address. */
const EBINTERFACE_WITH_GLN = Buffer.from(
  EBINTERFACE.toString('utf8')
    .replace('<BillersInvoiceRecipientID>39494</BillersInvoiceRecipientID>', '')
    .replace(
      /(<InvoiceRecipient>[\s\S]*?<Address>)/,
      '$1<AddressIdentifier AddressIdentifierType="GLN">9012345000004</AddressIdentifier>',
    ),
);
const UPLOADER = '0211:IT01234567890';

describe('routing of formats without a Peppol document type (from the EN 16931 model)', () => {
  it('FatturaPA: the buyer from its electronic address, the sender the uploading party (no place for BT-34)', () => {
    const { detection, routing } = inspectUpload(FATTURAPA, { uploader: UPLOADER });
    expect(detection).toMatchObject({ ok: true, format: { id: 'fatturapa-1.2' } });
    expect(detection.ok && detection.format.documentTypeId).toBeFalsy();
    expect(routing).toEqual({
      ok: true,
      receiver: { scheme: 'iso6523-actorid-upis', value: '0201:ufy9mh' },
      sender: { scheme: 'iso6523-actorid-upis', value: UPLOADER.toLowerCase() },
      countryC1: 'IT',
    });
  });

  it('without an uploader a FatturaPA invoice has no sender, and says which term is missing', () => {
    expect(inspectUpload(FATTURAPA).routing).toEqual({
      ok: false,
      code: 'ENDPOINT_MISSING',
      message: 'the FatturaPA 1.2 invoice has no seller electronic address (BT-34)',
    });
  });

  it('ebInterface: no buyer address is ENDPOINT_MISSING; the buyer GLN is its Peppol address', () => {
    const name = detectFormat(EBINTERFACE).name;
    expect(inspectUpload(EBINTERFACE, { uploader: UPLOADER }).routing).toEqual({
      ok: false,
      code: 'ENDPOINT_MISSING',
      message: `the ${name} invoice has no buyer electronic address (BT-49) nor a buyer GLN`,
    });
    expect(inspectUpload(EBINTERFACE_WITH_GLN, { uploader: '9914:ATU00000006' }).routing).toMatchObject({
      ok: true,
      receiver: { value: '0088:9012345000004' },
      sender: { value: '9914:atu00000006' },
      countryC1: 'AT',
    });
  });

  it("Svefaktura: both addresses are the parties' GLNs, the uploader is not used", () => {
    expect(inspectUpload(Buffer.from(svefakturaInvoice()), { uploader: UPLOADER }).routing).toMatchObject({
      ok: true,
      sender: { value: '0088:7350000000016' },
      receiver: { value: '0088:7350001234564' },
      countryC1: 'SE',
    });
  });
});

describe('the conversion source: the Peppol addresses written into a plain EN 16931 UBL', () => {
  const cases = [
    { name: 'FatturaPA', bytes: FATTURAPA, uploader: UPLOADER },
    { name: 'ebInterface', bytes: EBINTERFACE_WITH_GLN, uploader: '9914:ATU00000006' },
  ];
  it.each(cases)('$name converts to a valid Peppol BIS Billing 3 invoice with the routing addresses', async (c) => {
    const routing = inspectUpload(c.bytes, { uploader: c.uploader }).routing;
    if (!routing?.ok) throw new Error(`no routing: ${JSON.stringify(routing)}`);
    // The upload itself cannot become BIS 3: it lacks BT-34 (and BT-49 for ebInterface).
    expect(() => transformDocument(c.bytes, { targetFormat: 'peppol-bis3-ubl' })).toThrow(/BT-34|BT-49/);
    const source = await conversionSource(c.bytes, routing, inProcessTransform);
    const bis3 = transformDocument(source, { targetFormat: 'peppol-bis3-ubl' });
    const [icd, id] = routing.sender.value.split(/:(.*)/);
    expect(bis3.xml).toContain(`<cbc:EndpointID schemeID="${icd}">${id}</cbc:EndpointID>`);
    const result = await validator().validate(bis3.body);
    expect(result.assertions.filter((a) => a.flag === 'error')).toEqual([]);
    expect(result.isValid).toBe(true);
    // A pure function: the same bytes on every call (a send attempt that converts again sends the same document).
    expect((await conversionSource(c.bytes, routing, inProcessTransform)).equals(source)).toBe(true);
  });

  it('leaves a document that has both addresses as it is (no second conversion)', async () => {
    const sve = Buffer.from(svefakturaInvoice());
    const routing = inspectUpload(sve).routing;
    if (!routing?.ok) throw new Error('no routing');
    expect(await conversionSource(sve, routing, inProcessTransform)).toBe(sve);
  });
});
