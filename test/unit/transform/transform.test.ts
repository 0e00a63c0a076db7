import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { comparableCore, readCii, readUbl, writeCii, writeUbl } from '../../../src/en16931';
import { CII_URN, EN16931, NLCIUS, PEPPOL_BIS3, XRECHNUNG_3 } from '../../../src/formats/format-ids';
import { parseXml } from '../../../src/formats';
import {
  EN16931_TARGETS,
  listTransformations,
  lookupTransformation,
  renderTransformationTable,
  transformDocument,
  type TransformResult,
} from '../../../src/transform';
import { corpusFile } from '../../support/corpus';
import { requirePacks, validator } from '../validation/support';
import { fullCreditNote, fullInvoice } from './fixture';
import { golden, refusal } from './support';

jest.setTimeout(300_000);

/**
 * Golden tests for every conversion of the transformation table, on our own fixture: the output is compared with the
 * committed file in golden/ (regenerate with UPDATE_GOLDEN=1 after a deliberate change) and validated with the
 * official packs of the target, so a golden file can never hold an invalid document. Then the 400 and 422 cases.
 */

const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** Official validation of the result. */
async function expectValid(result: TransformResult): Promise<void> {
  const r = await validator().validate(Buffer.from(result.xml, 'utf8'));
  const errors = r.assertions.filter((a) => a.flag === 'error').map((a) => `${a.ruleId}: ${a.text.slice(0, 200)}`);
  expect({ target: result.report.target.id, validatedAs: r.format.id, errors }).toEqual({
    target: result.report.target.id,
    validatedAs: r.format.id,
    errors: [],
  });
}

const UBL_SOURCE = writeUbl(fullInvoice()).xml;
const CII_CREDIT_NOTE = writeCii(fullCreditNote()).xml;

describe('transformation table: golden conversions, each validated', () => {
  beforeAll(() =>
    requirePacks([
      'ubl-2.1',
      'cii-d16b',
      'en16931-ubl',
      'en16931-cii',
      'si-ubl-2.0',
      'nlcius-cii',
      'xrechnung-ubl',
      'xrechnung-cii',
      'peppol-bis3-ubl',
      'peppol-cen-en16931-ubl',
    ]),
  );

  it('the fixture itself is a valid EN 16931 invoice in both syntaxes', async () => {
    for (const xml of [UBL_SOURCE, writeCii(fullInvoice()).xml, CII_CREDIT_NOTE]) {
      const r = await validator().validate(Buffer.from(xml));
      expect(r.assertions.filter((a) => a.flag === 'error')).toEqual([]);
    }
  });

  it.each(EN16931_TARGETS.map((t) => [t]))('EN 16931 UBL invoice → %s', async (target) => {
    const result = transformDocument(UBL_SOURCE, { targetFormat: target });
    expect(result.report.source.id).toBe('en16931-ubl-invoice');
    expect(result.report.target.id).toMatch(new RegExp(`^${target}`));
    expect(result.report.unmapped).toEqual([]);
    expect(result.report.notCarried).toEqual([]);
    golden(`invoice-to-${target}.xml`, result.xml);
    await expectValid(result);
    // nothing of EN 16931 is lost on the way
    const back = target.endsWith('-ubl') ? readUbl(parseXml(result.xml)) : readCii(parseXml(result.xml));
    const expected = fullInvoice();
    expected.processControl = back.invoice.processControl;
    expect(JSON.parse(comparableCore(back.invoice))).toEqual(JSON.parse(comparableCore(expected)));
  });

  it.each(EN16931_TARGETS.map((t) => [t]))('EN 16931 CII credit note → %s', async (target) => {
    const result = transformDocument(CII_CREDIT_NOTE, { targetFormat: target });
    expect(result.report.source).toMatchObject({ id: 'en16931-cii', documentType: 'CreditNote' });
    expect(result.report.target.documentType).toBe('CreditNote');
    golden(`creditnote-to-${target}.xml`, result.xml);
    await expectValid(result);
  });

  it('a credit note in UBL is a CreditNote with CreditedQuantity, and BT-9 moves into PaymentMeans', () => {
    const { xml } = transformDocument(CII_CREDIT_NOTE, { targetFormat: 'en16931-ubl' });
    expect(xml).toContain('<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"');
    expect(xml).toContain('<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>');
    expect(xml).toContain('<cbc:CreditedQuantity unitCode="C62">10</cbc:CreditedQuantity>');
    expect(xml).toMatch(
      /<cac:PaymentMeans>\s*<cbc:PaymentMeansCode>58<\/cbc:PaymentMeansCode>\s*<cbc:PaymentDueDate>2026-12-02<\/cbc:PaymentDueDate>/,
    );
    expect(xml).not.toContain('<cbc:DueDate>');
    // BT-11 has no ProjectReference in a UBL credit note: an AdditionalDocumentReference with type 50
    expect(xml).toMatch(/<cbc:ID>PRJ-9<\/cbc:ID>\s*<cbc:DocumentTypeCode>50<\/cbc:DocumentTypeCode>/);
  });

  it(
    'CII dates are format 102, BT-111 is a second TaxTotalAmount in BT-6, the attachment is kept byte for ' + 'byte',
    () => {
      const { xml } = transformDocument(UBL_SOURCE, { targetFormat: CII_URN });
      expect(xml).toContain('<udt:DateTimeString format="102">20261102</udt:DateTimeString>');
      expect(xml).toContain('<ram:TaxTotalAmount currencyID="EUR">28.53</ram:TaxTotalAmount>');
      expect(xml).toContain('<ram:TaxTotalAmount currencyID="USD">31.09</ram:TaxTotalAmount>');
      const b64 = Buffer.from('date;hours\n2026-10-03;2\n').toString('base64');
      expect(xml).toContain(
        `<ram:AttachmentBinaryObject mimeCode="text/csv" filename="timesheet.csv">${b64}</ram:AttachmentBinaryObject>`,
      );
    },
  );

  it('sets the target CIUS identifiers and says so', () => {
    const r = transformDocument(UBL_SOURCE, { targetFormat: XRECHNUNG_3, targetSyntax: 'CII' });
    expect(r.report.target).toMatchObject({ id: 'xrechnung-cii', customizationId: XRECHNUNG_3 });
    expect(r.report.changed).toEqual([`BT-24 Specification identifier: "${EN16931}" → "${XRECHNUNG_3}"`]);
    const noProcess = fullInvoice();
    delete noProcess.processControl.businessProcessType;
    const p = transformDocument(writeUbl(noProcess).xml, { targetFormat: PEPPOL_BIS3 });
    expect(p.report.filled).toEqual([
      expect.stringContaining('BT-23 Business process type = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"'),
    ]);
    expect(p.xml).toContain('<cbc:ProfileID>urn:fdc:peppol.eu:2017:poacc:billing:01:1.0</cbc:ProfileID>');
  });

  it('fixes what Peppol requires where nothing is lost: BT-6 equal to BT-5 is left out (R005)', () => {
    const inv = fullInvoice();
    inv.vatAccountingCurrencyCode = 'EUR';
    inv.totals.totalVatAmountInAccountingCurrency = '28.53';
    const r = transformDocument(writeUbl(inv).xml, { targetFormat: PEPPOL_BIS3 });
    expect(r.report.changed).toContain(
      'BT-6 VAT accounting currency code "EUR" left out: it equals BT-5, which Peppol does not allow ' +
        '(PEPPOL-EN16931-R005)',
    );
    expect(r.xml).not.toContain('TaxCurrencyCode');
    expect(r.xml.match(/<cac:TaxTotal>/g)).toHaveLength(1);
  });

  it('a URN both syntaxes share picks the source syntax unless targetSyntax says otherwise', () => {
    expect(transformDocument(UBL_SOURCE, { targetFormat: NLCIUS }).report.target.id).toBe('nlcius-ubl-invoice');
    expect(transformDocument(UBL_SOURCE, { targetFormat: NLCIUS, targetSyntax: 'CII' }).report.target.id).toBe(
      'nlcius-cii',
    );
    expect(transformDocument(CII_CREDIT_NOTE, { targetFormat: EN16931 }).report.target.id).toBe('en16931-cii');
    // BIS Billing 3 is written in UBL only (its CII rules are not published current): the URN means UBL from CII too.
    expect(transformDocument(CII_CREDIT_NOTE, { targetFormat: PEPPOL_BIS3 }).report.target.id).toBe(
      'peppol-bis3-ubl-creditnote',
    );
  });
});

describe('what cannot be carried is reported, never dropped', () => {
  it('lists source elements the model has no place for, with their path and text', () => {
    const xml = UBL_SOURCE.replace('<cbc:IssueDate>', '<cbc:IssueDate>').replace(
      '</cbc:IssueDate>',
      '</cbc:IssueDate>\n  <cbc:IssueTime>12:00:00</cbc:IssueTime>',
    );
    const r = transformDocument(xml, { targetFormat: CII_URN });
    expect(r.report.unmapped).toEqual([{ path: '/Invoice/cbc:IssueTime', text: '12:00:00' }]);
    expect(r.xml).not.toContain('12:00:00');
  });

  it('reports unread attributes of elements it did read', () => {
    const xml = UBL_SOURCE.replace('<cbc:Name>Widget</cbc:Name>', '<cbc:Name languageID="en">Widget</cbc:Name>');
    expect(transformDocument(xml, { targetFormat: CII_URN }).report.unmapped).toEqual([
      { path: '/Invoice/cac:InvoiceLine[1]/cac:Item/cbc:Name/@languageID', text: 'en' },
    ]);
  });

  it('Factur-X EXTENDED sub-lines stay out of the EN 16931 lines and are listed', () => {
    const r = transformDocument(
      corpusFile('facturx/mustang/subinvoicelines/Extended_SubInvoiceLines_Hardware_Bsp2.xml'),
      { targetFormat: 'en16931-ubl' },
    );
    expect(r.report.unmapped.some((u) => /IncludedSupplyChainTradeLineItem\[\d+\]$/.test(u.path))).toBe(true);
    expect(r.report.unmapped.some((u) => u.path.endsWith('ram:LineStatusReasonCode') && u.text === 'GROUP')).toBe(true);
  });

  it('BT-83 without BT-81 cannot go to UBL and says so', () => {
    const inv = fullInvoice();
    inv.paymentInstructions = { remittanceInformation: 'REF-1', creditTransfers: [] };
    const r = transformDocument(writeCii(inv).xml, { targetFormat: 'en16931-ubl' });
    expect(r.report.notCarried).toEqual([
      expect.stringMatching(/^BT-83 Remittance information: UBL carries it in cac:PaymentMeans/),
    ]);
  });
});

describe('400: source not recognised or transformation not supported', () => {
  it('refuses a document that is not a known format', () => {
    const e = refusal(() => transformDocument('<x:Thing xmlns:x="urn:example"/>', { targetFormat: CII_URN }));
    expect(e).toMatchObject({ code: 'UNKNOWN_FORMAT', status: 400 });
  });

  it('refuses malformed and unsafe XML', () => {
    expect(refusal(() => transformDocument('<Invoice', { targetFormat: CII_URN }))).toMatchObject({
      code: 'INVALID_XML',
      status: 400,
    });
    expect(
      refusal(() =>
        transformDocument('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>', {
          targetFormat: CII_URN,
        }),
      ),
    ).toMatchObject({ code: 'UNSAFE_XML' });
  });

  it('refuses an unknown target format', () => {
    expect(refusal(() => transformDocument(UBL_SOURCE, { targetFormat: 'urn:example:nothing' }))).toMatchObject({
      status: 400,
      details: { reason: 'UNKNOWN_TARGET_FORMAT' },
    });
  });

  const NOT_SUPPORTED: Array<[string, () => unknown, RegExp]> = [
    [
      'Factur-X EXTENDED-CTC-FR output',
      () => transformDocument(UBL_SOURCE, { targetFormat: 'facturx-extended-ctc-fr' }),
      /CTC requirements/,
    ],
    [
      'FatturaPA output from a source that is not EN 16931',
      () =>
        transformDocument(corpusFile('ebinterface/ebinterface/ebi61/ebinterface_6p1 SEPA Direct Debit.xml'), {
          targetFormat: 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2',
        }),
      /only EN 16931 invoices .* convert to FatturaPA/,
    ],
    [
      'PINT Japan output',
      () => transformDocument(UBL_SOURCE, { targetFormat: 'urn:peppol:pint:billing-1@jp-1' }),
      /PINT Japan needs Japanese consumption tax content/,
    ],
    [
      'ebInterface 4.x source',
      () => transformDocument(corpusFile('ebinterface/ebinterface/ebi43/example-ebi43.xml'), { targetFormat: CII_URN }),
      /ebInterface 4\.x .* is not read yet/,
    ],
    [
      'Factur-X MINIMUM source',
      () => transformDocument(corpusFile('facturx/mustang/cii/facturFrMinimum.xml'), { targetFormat: 'en16931-ubl' }),
      /MINIMUM and BASIC WL carry no invoice lines/,
    ],
    ['G-account output', () => transformDocument(UBL_SOURCE, { targetFormat: 'nlcius-gaccount-ubl' }), /G-account/],
    [
      'an MLS message',
      () =>
        transformDocument(corpusFile('peppol/mls/good/MessageLevelStatus_Example_AB.xml'), { targetFormat: CII_URN }),
      /only invoices and credit notes/,
    ],
  ];

  it.each(NOT_SUPPORTED)('%s', (_what, fn, why) => {
    const e = refusal(fn);
    expect(e).toMatchObject({ status: 400, details: { reason: 'TRANSFORMATION_NOT_SUPPORTED' } });
    expect(e.message).toMatch(why);
  });

  it('docs/transformations.md is the table as it is', () => {
    const file = path.join(__dirname, '../../../docs/transformations.md');
    if (UPDATE) writeFileSync(file, renderTransformationTable());
    expect(readFileSync(file, 'utf8')).toBe(renderTransformationTable());
  });

  it('the table answers every pair it lists, and refuses what it does not know', () => {
    // 7 UBL and 11 CII EN 16931 sources to the 7 EN 16931 targets, PINT-EU / A-NZ, FatturaPA and ebInterface 6.1;
    // FatturaPA to the 7 EN 16931 targets; ebInterface 5.0 / 6.0 / 6.1 to those and ebInterface 6.1; Svefaktura and
    // SETU
    // to the EN 16931 targets and PINT-EU / A-NZ; the 8 PINT billing flavours to the EN 16931 targets (and PINT-EU to
    // itself); every one of them also to the 4 Factur-X PDF targets. MINIMUM and BASIC WL are refused everywhere.
    expect(listTransformations().filter((l) => l.supported)).toHaveLength(
      18 * 11 + 7 + 3 * 8 + 2 * 9 + 8 * 7 + 1 + 4 * (18 + 1 + 3 + 2 + 8),
    );
    expect(listTransformations().filter((l) => !l.supported && l.from.startsWith('facturx-'))).toHaveLength(2 * 15);
    expect(lookupTransformation('en16931-ubl', 'xrechnung-cii')).toEqual({ converter: 'en16931' });
    expect(lookupTransformation('something-else', 'en16931-ubl')).toEqual({
      notSupported: expect.stringContaining('no transformation from something-else'),
    });
  });
});

describe('422: the document cannot be converted', () => {
  it('names the XRechnung rules and terms the document lacks', () => {
    const inv = fullInvoice();
    delete inv.buyerReference;
    delete inv.seller.contact;
    const e = refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: 'xrechnung-cii' }));
    expect(e).toMatchObject({
      code: 'UNPROCESSABLE',
      status: 422,
      details: { reason: 'CANNOT_CONVERT', target: 'xrechnung-cii' },
    });
    expect((e.details?.['missing'] as Array<{ rule: string }>).map((m) => m.rule)).toEqual([
      'BR-DE-2',
      'BR-DE-5',
      'BR-DE-6',
      'BR-DE-7',
      'BR-DE-15',
    ]);
    expect(e.message).toContain('BR-DE-15 (BT-10): Buyer reference (BT-10) must be provided');
  });

  it(
    'refuses a second note for Peppol unless both parties are German (R002), and an NL order line reference ' +
      'without BT-13',
    () => {
      const inv = fullInvoice();
      inv.notes.push({ note: 'Second note' });
      // (without BT-14 too: a UBL OrderReference with only a sales order carries the binding's "NA" as BT-13)
      delete inv.purchaseOrderReference;
      delete inv.salesOrderReference;
      expect(refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: PEPPOL_BIS3 })).details).toMatchObject({
        missing: [{ rule: 'PEPPOL-EN16931-R002' }],
      });
      expect(refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: NLCIUS })).details).toMatchObject({
        missing: [{ rule: 'BR-NL-13', terms: ['BT-13', 'BT-132'] }],
      });
    },
  );

  it('names the NLCIUS and Peppol requirements', () => {
    const inv = fullInvoice();
    inv.seller.legalRegistrationIdentifier = { value: 'X1' };
    delete inv.buyer.electronicAddress;
    expect(refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: NLCIUS })).details).toMatchObject({
      missing: [{ rule: 'BR-NL-1', terms: ['BT-30', 'BT-30-1'] }],
    });
    expect(refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: PEPPOL_BIS3 })).details).toMatchObject({
      missing: [{ rule: 'PEPPOL-EN16931-R010', terms: ['BT-49'] }],
    });
  });

  it("names the norm's own mandatory terms a document lacks, for every target", () => {
    const inv = fullInvoice();
    delete inv.number;
    delete inv.lines[1]!.item.name;
    const e = refusal(() => transformDocument(writeCii(inv).xml, { targetFormat: 'en16931-ubl' }));
    expect(e.details).toMatchObject({
      reason: 'CANNOT_CONVERT',
      missing: [
        { rule: 'BR-02', terms: ['BT-1'] },
        { rule: 'BR-25', terms: ['BT-153'] },
      ],
    });
  });

  it('refuses values the model cannot take (scientific notation, a date that is not 102)', () => {
    const sci = UBL_SOURCE.replace(
      '<cbc:PayableAmount currencyID="EUR">200.00<',
      '<cbc:PayableAmount currencyID="EUR">2.0E2<',
    );
    expect(refusal(() => transformDocument(sci, { targetFormat: CII_URN })).details).toMatchObject({
      reason: 'CANNOT_CONVERT',
      invalid: [{ term: 'BT-115', path: '/Invoice/cac:LegalMonetaryTotal/cbc:PayableAmount' }],
    });
    const cii = writeCii(fullInvoice()).xml.replace(
      '<udt:DateTimeString format="102">20261102</udt:DateTimeString>',
      '<udt:DateTimeString format="610">202611</udt:DateTimeString>',
    );
    expect(refusal(() => transformDocument(cii, { targetFormat: 'en16931-ubl' })).details).toMatchObject({
      invalid: [{ term: 'BT-2', message: expect.stringContaining('not 102') }],
    });
  });
});
