import { comparableCore, readUbl, writeUbl, type Invoice } from '../../../src/en16931';
import { GatewayError } from '../../../src/core/gateway-error';
import { parseXml } from '../../../src/formats';
import { lookupTransformation, transformDocument, type TransformResult } from '../../../src/transform';
import { requirePacks } from '../validation/support';
import { australianInvoice, setuInvoice, svefakturaInvoice } from './dialect-fixtures';
import { fullInvoice } from './fixture';
import { golden, refusal, errorsOf } from './support';

jest.setTimeout(300_000);

/**
 * The dialect conversions (Svefaktura 1.0, PINT, SETU): every output is compared with its golden file (UPDATE_GOLDEN=1
 * regenerates) and validated with the official packs of its target; sources are validated with their own packs where
 * one exists. Then the report's honesty (what was derived, what stayed unmapped) and the 400 / 422 cases.
 */

async function expectValid(result: TransformResult): Promise<void> {
  const { format, errors } = await errorsOf(result.xml);
  expect({ target: result.report.target.id, validatedAs: format, errors }).toEqual({
    target: result.report.target.id,
    validatedAs: format,
    errors: [],
  });
  expect(format).toBe(result.report.target.id);
}

const missingRules = (e: GatewayError): string[] =>
  ((e.details?.['missing'] as Array<{ rule: string }> | undefined) ?? []).map((m) => m.rule);
const invalidMessages = (e: GatewayError): string[] =>
  ((e.details?.['invalid'] as Array<{ message: string }> | undefined) ?? []).map((m) => m.message);
const back = (xml: string): Invoice => readUbl(parseXml(xml)).invoice;

beforeAll(() =>
  requirePacks([
    'ubl-2.1',
    'cii-d16b',
    'en16931-ubl',
    'en16931-cii',
    'si-ubl-2.0',
    'xrechnung-ubl',
    'peppol-bis3-ubl',
    'peppol-cen-en16931-ubl',
    'svefaktura',
    'svefaktura-xsd',
    'pint-eu',
    'pint-aunz',
  ]),
);

describe('Svefaktura 1.0 → EN 16931 formats', () => {
  const SOURCE = svefakturaInvoice();

  it('the fixture is a valid Svefaktura 1.0 invoice (SFTI schema and rules)', async () => {
    expect(await errorsOf(SOURCE)).toEqual({ format: 'svefaktura-1.0', errors: [] });
  });

  it.each([['peppol-bis3-ubl'], ['en16931-ubl'], ['en16931-cii'], ['xrechnung-ubl'], ['nlcius-ubl'], ['pint-eu-ubl']])(
    '→ %s: golden and valid',
    async (target) => {
      const r = transformDocument(SOURCE, { targetFormat: target });
      expect(r.report.source.id).toBe('svefaktura-1.0');
      golden(`svefaktura-to-${target}.xml`, r.xml);
      await expectValid(r);
    },
  );

  it('maps by the SFTI rules and reports what it derived and what has no EN 16931 home', () => {
    const r = transformDocument(SOURCE, { targetFormat: 'peppol-bis3-ubl' });
    const inv = back(r.xml);
    expect(inv.seller).toMatchObject({
      name: 'Nordisk Kontorsmaterial AB',
      tradingName: 'Nordisk Kontor',
      legalRegistrationIdentifier: { value: '5560360793', schemeId: '0007' },
      vatIdentifier: 'SE556036079301',
      taxRegistrationIdentifier: 'Godkänd för F-skatt',
      electronicAddress: { value: '7350000000016', schemeId: '0088' },
      postalAddress: {
        line1: 'Industrivägen 12',
        line2: 'Box 117',
        city: 'Umeå',
        postCode: '90326',
        countryCode: 'SE',
      },
    });
    expect(inv.buyer).toMatchObject({
      electronicAddress: { value: '7350001234564', schemeId: '0088' },
      legalRegistrationIdentifier: { value: '2120001231', schemeId: '0007' },
    });
    expect(inv.buyerReference).toBe('Lena Ek 4410');
    expect(inv.purchaseOrderReference).toBe('PO-8812');
    expect(inv.lines.map((l) => [l.purchaseOrderLineReference, l.item.name, l.vat.categoryCode, l.vat.rate])).toEqual([
      ['1', 'Kopieringspapper A4, 500 ark', 'S', '25'],
      ['2', 'Pärmar A4, 10-pack', 'S', '25'],
    ]);
    expect(inv.lines[0]?.item.standardIdentifier).toEqual({ value: '7312345000120', schemeId: '0160' });
    expect(inv.totals).toMatchObject({
      totalWithVat: '6250.50',
      roundingAmount: '-0.50',
      amountDueForPayment: '6250.00',
    });
    expect(inv.paymentInstructions).toMatchObject({
      meansTypeCode: '30',
      remittanceInformation: '1001202611',
      creditTransfers: [{ accountIdentifier: '50501055', serviceProviderIdentifier: 'SE:BANKGIRO' }],
    });
    expect(inv.delivery).toMatchObject({ actualDeliveryDate: '2026-10-28' });
    expect(r.report.unmapped).toEqual([
      {
        path: '/Invoice/cac:SellerParty/cac:Party/cac:PartyTaxScheme[1]/cac:RegistrationAddress/cbc:CityName',
        text: 'Umeå',
      },
      { path: '/Invoice/cac:PaymentTerms/cbc:PenaltySurchargePercent', text: '8' },
      { path: '/Invoice/cac:DeliveryTerms', text: 'Fritt levererat' },
    ]);
    expect(r.report.filled).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^BT-34 Seller electronic address = 0088:7350000000016/),
        expect.stringMatching(/^BT-81 Payment means type code = "30"/),
        expect.stringMatching(/^BT-112 Invoice total amount with VAT = 6250.50/),
        expect.stringMatching(/^line 2: BT-151\/BT-152 VAT category S 25 %/),
      ]),
    );
  });

  it('a Svefaktura credit note (381) referencing the invoice becomes a valid BIS 3 CreditNote', async () => {
    const credit = SOURCE.replace(
      '<InvoiceTypeCode>380</InvoiceTypeCode>',
      '<InvoiceTypeCode>381</InvoiceTypeCode>',
    ).replace(
      '</RequisitionistDocumentReference>',
      '</RequisitionistDocumentReference>\n  <InitialInvoiceDocumentReference>\n    <cac:ID>SF-2026-0990</cac:ID>\n ' +
        ' </InitialInvoiceDocumentReference>',
    );
    expect(await errorsOf(credit)).toEqual({ format: 'svefaktura-1.0', errors: [] });
    const r = transformDocument(credit, { targetFormat: 'peppol-bis3-ubl' });
    expect(r.report.target.id).toBe('peppol-bis3-ubl-creditnote');
    expect(r.xml).toContain('<cac:InvoiceDocumentReference>');
    await expectValid(r);
  });

  it(
    'Plusgiro becomes SE:PLUSGIRO; a second payment means with another OCR reference stays unmapped (EN 16931 has ' +
      'one BT-83)',
    async () => {
      const second = `<cac:PaymentMeans>
    <cac:PaymentMeansTypeCode>1</cac:PaymentMeansTypeCode>
    <cac:PayeeFinancialAccount>
      <cac:ID>1234566</cac:ID>
      <cac:FinancialInstitutionBranch><cac:FinancialInstitution><cac:ID>BGABSESS</cac:ID></cac:FinancialInstitution></cac:FinancialInstitutionBranch>
      <cac:PaymentInstructionID>9999999999</cac:PaymentInstructionID>
    </cac:PayeeFinancialAccount>
  </cac:PaymentMeans>
  <cac:PaymentTerms>`;
      const xml = SOURCE.replace('<cac:ID>BGABSESS</cac:ID>', '<cac:ID>PGSISESS</cac:ID>').replace(
        '<cac:PaymentTerms>',
        second,
      );
      const r = transformDocument(xml, { targetFormat: 'peppol-bis3-ubl' });
      expect(back(r.xml).paymentInstructions?.creditTransfers).toEqual([
        { accountIdentifier: '50501055', serviceProviderIdentifier: 'SE:PLUSGIRO' },
      ]);
      expect(r.report.unmapped).toEqual(
        expect.arrayContaining([{ path: '/Invoice/cac:PaymentMeans[2]', text: expect.stringContaining('9999999999') }]),
      );
      await expectValid(r);
    },
  );

  it('without a GLN or Swedish organisation number there is no Peppol address: 422 naming R020 / R010', () => {
    const xml = SOURCE.replace(
      /<cac:PartyIdentification>\s*<cac:ID identificationSchemeAgencyID="9">7350000000016<\/cac:ID>\s*<\/cac:PartyIdentification>/,
      '',
    )
      .replace(/<cac:CompanyID>5560360793<\/cac:CompanyID>/, '<cac:CompanyID>AB-1</cac:CompanyID>')
      .replace(
        /<cac:IdentificationCode>SE<\/cac:IdentificationCode>\s*<\/cac:Country>\s*<\/cac:Address>\s*<cac:PartyTaxScheme>\s*<cbc:RegistrationName>/,
        '<cac:IdentificationCode>NO</cac:IdentificationCode></cac:Country></cac:Address><cac:PartyTaxScheme><cbc:RegistrationName>',
      );
    const e = refusal(() => transformDocument(xml, { targetFormat: 'peppol-bis3-ubl' }));
    expect(e).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT' } });
    expect(missingRules(e)).toEqual(['PEPPOL-EN16931-R020']);
    // plain EN 16931 does not need it
    expect(transformDocument(xml, { targetFormat: 'en16931-ubl' }).report.source.id).toBe('svefaktura-1.0');
  });

  it(
    'refuses content EN 16931 cannot take as it is (422): an address without country, an allowance without ' + 'reason',
    () => {
      const noCountry = SOURCE.replace(
        /(<cbc:PostalZone>93135<\/cbc:PostalZone>)\s*<cac:Country>\s*<cac:IdentificationCode>SE<\/cac:IdentificationCode>\s*<\/cac:Country>/,
        '$1',
      );
      const e1 = refusal(() => transformDocument(noCountry, { targetFormat: 'peppol-bis3-ubl' }));
      expect(e1).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT' } });
      expect(invalidMessages(e1)).toEqual([expect.stringContaining('deliver-to address has no country code')]);
      const withCharge = SOURCE.replace(
        '<cac:TaxTotal>',
        '<AllowanceCharge><cbc:ChargeIndicator>true</cbc:ChargeIndicator><cbc:Amount ' +
          'amountCurrencyID="SEK">0</cbc:Amount></AllowanceCharge><cac:TaxTotal>',
      );
      expect(invalidMessages(refusal(() => transformDocument(withCharge, { targetFormat: 'en16931-ubl' })))).toEqual([
        expect.stringContaining('UN/ECE 4465'),
      ]);
    },
  );

  it('nothing produces Svefaktura (400)', () => {
    const e = refusal(() => transformDocument(writeUbl(fullInvoice()).xml, { targetFormat: 'svefaktura-1.0' }));
    expect(e).toMatchObject({ status: 400, details: { reason: 'TRANSFORMATION_NOT_SUPPORTED' } });
    expect(e.message).toMatch(/legacy inbound format/);
  });
});

describe('SETU Invoice → NLCIUS and BIS 3', () => {
  const SOURCE = setuInvoice();

  it('the fixture is a valid NLCIUS (SI-UBL 2.0) invoice, which a SETU invoice is', async () => {
    expect(await errorsOf(SOURCE, 'ubl-2.1,si-ubl-2.0')).toMatchObject({ errors: [] });
  });

  it.each([['nlcius-ubl'], ['peppol-bis3-ubl'], ['nlcius-cii'], ['pint-eu-ubl']])(
    '→ %s: golden and valid',
    async (target) => {
      const r = transformDocument(SOURCE, { targetFormat: target });
      expect(r.report.source.id).toBe('setu-invoice-ubl');
      golden(`setu-to-${target}.xml`, r.xml);
      await expectValid(r);
    },
  );

  it(
    'keeps hour types and work week, the assignment; reports the time cards; derives the Peppol address from the ' +
      'KVK number',
    () => {
      const r = transformDocument(SOURCE, { targetFormat: 'peppol-bis3-ubl' });
      const inv = back(r.xml);
      expect(inv.lines.map((l) => [l.item.name, l.item.attributes])).toEqual([
        ['Regular', [{ name: 'werkweeknummer', value: '45' }]],
        ['Overtime', [{ name: 'werkweeknummer', value: '45' }]],
      ]);
      expect(inv.supportingDocuments).toEqual([
        expect.objectContaining({ reference: 'OPDR-7781', description: 'Assignment' }),
      ]);
      expect(inv.seller.electronicAddress).toEqual({ value: '34567890', schemeId: '0106' });
      expect(inv.buyer.electronicAddress).toEqual({ value: '45678901', schemeId: '0106' });
      expect(r.report.unmapped).toEqual([
        { path: '/Invoice/cac:InvoiceLine[1]/cac:DocumentReference', text: 'TK-2026-45-118#1' },
        { path: '/Invoice/cac:InvoiceLine[2]/cac:DocumentReference', text: 'TK-2026-45-118#2' },
      ]);
      expect(r.report.filled).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^BT-34 Seller electronic address = 0106:34567890 \(SETU has no EndpointID/),
        ]),
      );
    },
  );

  it('a SETU invoice with two notes goes to NLCIUS but not to BIS 3 (422, PEPPOL-EN16931-R002)', () => {
    const twoNotes = SOURCE.replace(
      '<cbc:DocumentCurrencyCode>',
      '<cbc:Note>Uitzendkracht via raamovereenkomst.</cbc:Note>\n  <cbc:DocumentCurrencyCode>',
    );
    expect(transformDocument(twoNotes, { targetFormat: 'nlcius-ubl' }).report.target.id).toBe('nlcius-ubl-invoice');
    expect(missingRules(refusal(() => transformDocument(twoNotes, { targetFormat: 'peppol-bis3-ubl' })))).toEqual([
      'PEPPOL-EN16931-R002',
    ]);
  });

  it('nothing produces SETU (400)', () => {
    expect(
      refusal(() => transformDocument(writeUbl(fullInvoice()).xml, { targetFormat: 'setu-invoice-ubl' })).message,
    ).toMatch(/staffing data/);
  });
});

describe('PINT ↔ BIS 3', () => {
  const BIS3 = transformDocument(writeUbl(fullInvoice()).xml, { targetFormat: 'peppol-bis3-ubl' }).xml;

  it('BIS 3 → PINT-EU: golden, valid with the official PINT-EU pack', async () => {
    const r = transformDocument(BIS3, { targetFormat: 'pint-eu-ubl' });
    expect(r.report.target.customizationId).toBe('urn:peppol:pint:billing-1@eu-1');
    golden('bis3-to-pint-eu-ubl.xml', r.xml);
    await expectValid(r);
  });

  it('PINT-EU → BIS 3: golden, valid, and the EN 16931 content is what it was', async () => {
    const pint = transformDocument(BIS3, { targetFormat: 'pint-eu-ubl' }).xml;
    const r = transformDocument(pint, { targetFormat: 'peppol-bis3-ubl' });
    expect(r.report.source.id).toBe('pint-eu-ubl-invoice');
    expect(r.report.unmapped).toEqual([]);
    golden('pint-eu-to-peppol-bis3-ubl.xml', r.xml);
    await expectValid(r);
    expect(JSON.parse(comparableCore(back(r.xml)))).toEqual(JSON.parse(comparableCore(back(BIS3))));
  });

  it(
    'EN 16931 (Australian supplier, AUD, GST 10 %) → PINT A-NZ: golden, valid with the official PINT A-NZ ' + 'pack',
    async () => {
      const r = transformDocument(writeUbl(australianInvoice()).xml, { targetFormat: 'pint-aunz-ubl' });
      expect(r.report.changed).toEqual(
        expect.arrayContaining([expect.stringMatching(/^BT-31 Seller tax identifier "AU47555222000" → "47555222000"/)]),
      );
      expect(r.xml).toContain('<cbc:ID>GST</cbc:ID>');
      golden('en16931-to-pint-aunz-ubl.xml', r.xml);
      await expectValid(r);
    },
  );

  it('BIS 3 of a Dutch supplier → PINT A-NZ: 422 naming the jurisdiction and currency', () => {
    const e = refusal(() => transformDocument(BIS3, { targetFormat: 'pint-aunz-ubl' }));
    expect(e).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT', target: 'pint-aunz-ubl' } });
    expect(missingRules(e)).toEqual(['PINT-AUNZ jurisdiction', 'PINT-AUNZ currency']);
  });

  it('PINT A-NZ (GST, Australian parties) → BIS 3: 422, it is no EN 16931 invoice', () => {
    const aunz = transformDocument(writeUbl(australianInvoice()).xml, { targetFormat: 'pint-aunz-ubl' }).xml;
    const e = refusal(() => transformDocument(aunz, { targetFormat: 'peppol-bis3-ubl' }));
    expect(e).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT' } });
    const messages = invalidMessages(e);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining('the tax scheme is "GST"'),
        expect.stringContaining('the seller is in AU, outside the EU/EEA'),
      ]),
    );
  });

  it('generic PINT with EU parties and VAT → BIS 3 is converted; a PINT-only tax category is refused', async () => {
    const generic = transformDocument(BIS3, { targetFormat: 'pint-eu-ubl' }).xml.replace(
      'urn:peppol:pint:billing-1@eu-1',
      'urn:peppol:pint:billing-1',
    );
    const r = transformDocument(generic, { targetFormat: 'peppol-bis3-ubl' });
    expect(r.report.source.id).toBe('pint-ubl-invoice');
    await expectValid(r);
    const withAA = generic.replace(/<cbc:ID>S<\/cbc:ID>/g, '<cbc:ID>AA</cbc:ID>');
    expect(invalidMessages(refusal(() => transformDocument(withAA, { targetFormat: 'peppol-bis3-ubl' })))).toEqual(
      expect.arrayContaining([expect.stringContaining('tax category "AA" is allowed by PINT but not by EN 16931')]),
    );
  });

  it.each([
    ['pint-jp-ubl', /Japanese consumption tax/],
    ['pint-sg-ubl', /Singapore GST/],
    ['pint-my-ubl', /MyInvois/],
    ['pint-ae-ubl', /UAE VAT/],
    ['pint-om-ubl', /Omani VAT/],
    ['pint-ubl', /generic PINT billing specification/],
    ['pint-aunz-selfbilling-ubl', /self-billing/],
  ])('BIS 3 → %s is refused in the table (400)', (target, why) => {
    const e = refusal(() => transformDocument(BIS3, { targetFormat: target }));
    expect(e).toMatchObject({ status: 400, details: { reason: 'TRANSFORMATION_NOT_SUPPORTED' } });
    expect(e.message).toMatch(why);
  });

  it('PINT → another PINT jurisdiction is refused (400)', () => {
    const pint = transformDocument(BIS3, { targetFormat: 'pint-eu-ubl' }).xml;
    expect(refusal(() => transformDocument(pint, { targetFormat: 'pint-aunz-ubl' })).message).toMatch(
      /another PINT jurisdiction/,
    );
  });
});

describe('DICO', () => {
  it('is refused both ways with the reason (licence-gated, no public mapping or sample)', () => {
    for (const l of [
      lookupTransformation('dico-sales005', 'peppol-bis3-ubl'),
      lookupTransformation('dico-insbou004', 'nlcius-ubl'),
      lookupTransformation('nlcius-ubl', 'dico-sales005'),
    ]) {
      expect(l).toEqual({ notSupported: expect.stringMatching(/licen[cs]e/) });
    }
  });
});
