import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import {
  comparableCore,
  readEbInterface,
  writeCii,
  writeEbInterface,
  writeUbl,
  type Invoice,
} from '../../../src/en16931';
import { EN16931 } from '../../../src/formats/format-ids';
import { parseXml } from '../../../src/formats';
import { lookupTransformation, transformDocument, type TransformResult } from '../../../src/transform';
import { CORPUS_DIR, corpusFile } from '../../support/corpus';
import { requirePacks } from '../validation/support';
import { fullCreditNote, fullInvoice } from './fixture';
import { golden, refusal, errorsOf } from './support';

jest.setTimeout(300_000);

/**
 * ebInterface ↔ EN 16931: the real ebInterface samples into UBL (validated with the official EN 16931 UBL pack, or
 * refused naming the rule they break), the UBL samples of the Austrian ebInterface↔UBL mapping into ebInterface 6.1
 * (validated with the official ebInterface schemas, or refused naming what they lack), our fixture through
 * ebInterface 6.1 and back (golden files), and the 400 / 422 answers.
 */

const EBI = 'http://www.ebinterface.at/schema/6p1/';

async function expectValid(result: TransformResult): Promise<void> {
  const r = await errorsOf(result.xml);
  expect({ target: result.report.target.id, ...r }).toEqual({
    target: result.report.target.id,
    format: result.report.target.id,
    errors: [],
  });
}

const files = (dir: string): string[] =>
  readdirSync(path.join(CORPUS_DIR, dir))
    .filter((f) => f.endsWith('.xml'))
    .sort()
    .map((f) => `${dir}/${f}`);

const invalidTerms = (e: GatewayError): string[] =>
  (e.details?.['invalid'] as Array<{ term: string; message: string }>).map((p) =>
    `${p.term} ${/\((BR-[A-Z0-9-]+)\)/.exec(p.message)?.[1] ?? ''}`.trim(),
  );
const missingRules = (e: GatewayError): string[] =>
  (e.details?.['missing'] as Array<{ rule: string }>).map((m) => m.rule);

describe('ebInterface 6.1 samples → EN 16931 UBL', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'en16931-ubl']));

  // None of the published 6.1 samples is arithmetically an EN 16931 invoice: each is refused with the rule it breaks.
  const EXPECTED: Record<string, string[]> = {
    'ebinterface_6p1 SEPA Direct Debit.xml': ['BT-115 BR-CO-16'],
    'ebinterface_6p1_sample_ph1.xml': ['BT-115 BR-CO-16'],
    'ebinterface_6p1_sample_more_consistent.xml': ['BT-116 BR-S-08'],
    'ebinterface_6p1_sample_dokumentation.xml': [
      'BT-112 BR-CO-15',
      'BT-116 BR-S-08',
      'BT-116 BR-S-08',
      'BT-116 BR-O-08',
      'BT-116 BR-E-08',
    ],
    'ebinterface_6p1_sample_ecosio.xml': [
      'BT-112 BR-CO-15',
      'BT-116 BR-S-08',
      'BT-116 BR-S-08',
      'BT-116 BR-E-08',
      'BT-116 BR-E-08',
    ],
  };

  it('covers every 6.1 sample', () => {
    expect(files('ebinterface/ebinterface/ebi61').map((f) => path.basename(f))).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s is refused (422) naming the EN 16931 rule it breaks', (file, terms) => {
    const e = refusal(() =>
      transformDocument(corpusFile(`ebinterface/ebinterface/ebi61/${file}`), { targetFormat: 'en16931-ubl' }),
    );
    expect(e).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT' } });
    expect(invalidTerms(e)).toEqual(terms);
  });

  it(
    'the ph1 sample without its below-the-line item converts to valid EN 16931 UBL; what has no term is ' + 'listed',
    async () => {
      const xml = corpusFile('ebinterface/ebinterface/ebi61/ebinterface_6p1_sample_ph1.xml')
        .toString('utf8')
        .replace(/<BelowTheLineItem>[\s\S]*<\/BelowTheLineItem>/, '')
        .replace('<PayableAmount>13.5</PayableAmount>', '<PayableAmount>12</PayableAmount>');
      const r = transformDocument(xml, { targetFormat: 'en16931-ubl' });
      expect(r.report.source).toMatchObject({ id: 'ebinterface-6.1', syntax: 'ebInterface', documentType: 'Invoice' });
      expect(r.report.target.id).toBe('en16931-ubl-invoice');
      expect(r.report.changed).toEqual([
        'BT-130 unit "STK" at /Invoice/Details/ItemList/ListLineItem/Quantity written as UN/ECE Rec 20 code H87',
      ]);
      expect(r.report.unmapped.map((u) => u.path)).toEqual([
        '/Invoice/@GeneratingSystem',
        '/Invoice/@DocumentTitle',
        '/Invoice/@Language',
        '/Invoice/Biller/Address/POBox',
        '/Invoice/Biller/Contact/Salutation',
        '/Invoice/InvoiceRecipient/OrderReference/ReferenceDate',
        '/Invoice/InvoiceRecipient/OrderReference/Description',
        '/Invoice/InvoiceRecipient/Contact/Salutation',
        '/Invoice/PaymentMethod/UniversalBankTransaction/@ConsolidatorPayable',
      ]);
      expect(r.xml).toContain('<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>');
      expect(r.xml).toContain(
        '<cbc:PaymentMeansCode name="Zahlbar per Überweisung. Bitte SEPA Voraussetzungen ' +
          'berücksichtigen.">58</cbc:PaymentMeansCode>',
      );
      // no contact phone or email: the address's are the contact's (BT-42, BT-43)
      expect(r.xml).toContain('<cbc:Telephone>+43 1 58801 8857452</cbc:Telephone>');
      expect(await errorsOf(r.xml)).toEqual({ format: 'en16931-ubl-invoice', errors: [] });
    },
  );
});

describe('older ebInterface versions the same reader reads (6.0, 5.0)', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'en16931-ubl']));

  const OUTCOME: Record<string, string> = {
    'ebinterface/ebinterface/ebi60/ebi60-delivery-desc.xml': 'valid',
    'ebinterface/ebinterface/ebi60/ebinterface_6p0_sample_dokumentation.xml': '422 BT-112',
    'ebinterface/ebinterface/ebi60/ebinterface_6p0_sample_ecosio.xml': '422 BT-112',
    'ebinterface/ebinterface/ebi60/ebinterface_6p0_sample_ph1.xml': 'valid',
    'ebinterface/ebinterface/ebi60/ebinterface_6p0_sample_ph2.xml': 'valid',
    'ebinterface/ebinterface/ebi50/ebinterface_5p0_sample.xml': '422 BT-112',
    'ebinterface/ebinterface/ebi50/ebinterface_5p0_sample_ecosio.xml': '422 BT-112',
    'ebinterface/ebinterface/ebi50/example-ebi50-contact-email.xml': 'valid',
    'ebinterface/ebinterface/ebi50/example-ebi50.xml': 'valid',
  };

  it('covers every 6.0 and 5.0 sample', () => {
    expect([...files('ebinterface/ebinterface/ebi60'), ...files('ebinterface/ebinterface/ebi50')].sort()).toEqual(
      Object.keys(OUTCOME).sort(),
    );
  });

  it.each(Object.entries(OUTCOME))('%s → %s', async (file, outcome) => {
    const convert = (): TransformResult => transformDocument(corpusFile(file), { targetFormat: 'en16931-ubl' });
    if (outcome === 'valid') {
      const r = convert();
      expect(r.report.source.syntax).toBe('ebInterface');
      expect(await errorsOf(r.xml)).toEqual({ format: 'en16931-ubl-invoice', errors: [] });
    } else {
      const e = refusal(convert);
      expect(e.status).toBe(422);
      expect(invalidTerms(e)[0]).toMatch(new RegExp(`^${outcome.slice(4)}`));
    }
  });

  it('ebInterface 4.x is refused (400) with the reason', () => {
    for (const file of files('ebinterface/ebinterface/ebi43')) {
      const e = refusal(() => transformDocument(corpusFile(file), { targetFormat: 'en16931-ubl' }));
      expect(e).toMatchObject({ status: 400, details: { reason: 'TRANSFORMATION_NOT_SUPPORTED' } });
      expect(e.message).toMatch(/ebInterface 4\.x .* is not read yet/);
    }
  });
});

describe('UBL samples of the ebInterface↔UBL mapping → ebInterface 6.1', () => {
  beforeAll(() => requirePacks(['ebinterface-xsd']));

  /*
   * They are CEN BII (pre-EN 16931) documents, which detection refuses as retired; named as EN 16931 UBL with
   * sourceFormat they are read by the UBL reader. Those that lack EN 16931 mandatory data are refused naming it: BII
   * put the party name in cac:PartyName (BT-28 in EN 16931), so several have no seller or buyer name (BT-27 / BT-44).
   */
  const NO_NAMES = ['BR-06', 'BR-07'];
  const REFUSED: Record<string, string[]> = {
    'invoice/20120828104552.325.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/good-no-orderid-no-ebi40.xml': ['BR-07'],
    'invoice/test-empty-bic.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-empty-bic2.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-empty-bic3.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-invoicetypecode-326.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-invoicetypecode-386.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-invoicetypecode-389.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-paymentmeans-code-30.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-paymentmeans-code-31.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-paymentmeans-code-42.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-paymentmeans-code-49.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/test-paymentmeans-code-58.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/testbed-test-invoice.xml': NO_NAMES,
    'invoice/internal/id10305.xml': NO_NAMES,
    'invoice/internal/id10308.xml': NO_NAMES,
    'invoice/internal/id10310.xml': NO_NAMES,
    'invoice/internal/id10376.xml': NO_NAMES,
    'invoice/internal/id10381.xml': NO_NAMES,
    'invoice/internal/id10390.xml': NO_NAMES,
    'invoice/internal/id11877.xml': [...NO_NAMES, 'BR-CO-04'],
    'invoice/internal/telfs_ubl.xml': [...NO_NAMES, 'BR-CO-04', 'EBI61-DECIMAL2'],
    // BII credit notes have no type code (BT-3).
    'creditnote/BII05 TRDM014 example at.xml': ['BR-04', ...NO_NAMES],
    'creditnote/BII05 TRDM014 example is.xml': ['BR-04', ...NO_NAMES],
    'creditnote/creditnote-with-all-elements-new-creditorid.xml': ['BR-04', ...NO_NAMES],
    'creditnote/creditnote-with-all-elements.xml': ['BR-04', ...NO_NAMES],
  };
  const all = ['invoice', 'invoice/internal', 'creditnote']
    .flatMap((d) => files(`ebinterface/ubl/${d}`))
    .map((f) => f.slice('ebinterface/ubl/'.length));
  const sourceFormat = (f: string): string =>
    f.startsWith('creditnote/') ? 'en16931-ubl-creditnote' : 'en16931-ubl-invoice';

  it('a CEN BII document is refused as retired unless named as EN 16931 UBL', () => {
    const e = refusal(() =>
      transformDocument(corpusFile('ebinterface/ubl/invoice/test-base-at-gov.xml'), {
        targetFormat: 'ebinterface-6.1',
      }),
    );
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/CEN BII/);
  });

  it('the invoice_bad directory of the mapping project holds no files here, so nothing is expected of it', () => {
    expect(
      existsSync(path.join(CORPUS_DIR, 'ebinterface/ubl/invoice_bad')) ? files('ebinterface/ubl/invoice_bad') : [],
    ).toEqual([]);
  });

  it.each(all.filter((f) => !(f in REFUSED)).map((f) => [f]))('%s → valid ebInterface 6.1', async (file) => {
    const r = transformDocument(corpusFile(`ebinterface/ubl/${file}`), {
      targetFormat: EBI,
      sourceFormat: sourceFormat(file),
    });
    expect(r.report.target).toMatchObject({ id: 'ebinterface-6.1', syntax: 'ebInterface', documentType: 'Invoice' });
    expect(r.xml).toContain(`<Invoice xmlns="${EBI}" GeneratingSystem="Invoice Gateway"`);
    await expectValid(r);
  });

  it.each(Object.entries(REFUSED))('%s is refused (422) naming %j', (file, rules) => {
    const e = refusal(() =>
      transformDocument(corpusFile(`ebinterface/ubl/${file}`), {
        targetFormat: 'ebinterface-6.1',
        sourceFormat: sourceFormat(file),
      }),
    );
    expect(e).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT', target: 'ebinterface-6.1' } });
    expect(missingRules(e)).toEqual(rules);
  });

  it('maps the Austrian government sample field by field', () => {
    const { xml, report } = transformDocument(corpusFile('ebinterface/ubl/invoice/test-base-at-gov.xml'), {
      targetFormat: 'ebinterface-6.1',
      sourceFormat: 'en16931-ubl-invoice',
    });
    expect(xml).toContain('<InvoiceNumber>TOSL108</InvoiceNumber>');
    expect(xml).toMatch(
      /<InvoiceRecipient>\s*<VATIdentificationNumber>ATU00000000<\/VATIdentificationNumber>[\s\S]*<OrderReference>\s*<OrderID>Z01<\/OrderID>/,
    );
    expect(xml).toMatch(
      /<InvoiceRecipientsOrderReference>\s*<OrderID>Z01<\/OrderID>\s*<OrderPositionNumber>1<\/OrderPositionNumber>/,
    );
    expect(xml).toContain('<AdditionalInformation Key="Color">Black</AdditionalInformation>');
    // a line reduction without base amount gets quantity × price, and says so
    expect(report.filled).toContain(
      'line 1: reduction BaseAmount = 1273.00 (quantity × price; mandatory in ebInterface)',
    );
    expect(report.notCarried).toEqual(
      expect.arrayContaining([expect.stringMatching(/^BT-19 Buyer accounting reference/)]),
    );
  });
});

/** The fixture as it comes back from ebInterface: what ebInterface does not carry removed, what it filled added. */
function carriedByEbInterface(inv: Invoice): Invoice {
  const out = structuredClone(inv);
  for (const k of [
    'vatAccountingCurrencyCode',
    'projectReference',
    'contractReference',
    'receivingAdviceReference',
    'tenderOrLotReference',
    'invoicedObjectIdentifier',
    'buyerReference',
    'payee',
    'taxRepresentative',
    'invoicingPeriod',
  ] as const)
    delete out[k];
  delete out.totals.totalVatAmountInAccountingCurrency;
  out.processControl = { specificationIdentifier: EN16931 };
  out.supportingDocuments = [];
  delete out.seller.electronicAddress;
  delete out.buyer.electronicAddress;
  delete out.seller.postalAddress?.line2;
  out.notes = out.notes.map((n) => ({ note: n.note }));
  // Document charge without base: BT-106; line charge without base: quantity × price (reported in `filled`).
  for (const ac of out.allowanceCharges) ac.baseAmount ??= out.totals.sumOfLineNetAmounts;
  for (const l of out.lines) {
    delete l.objectIdentifier;
    delete l.buyerAccountingReference;
    delete l.price.grossPrice;
    delete l.price.discount;
    delete l.price.baseQuantityUnitCode;
    delete l.item.countryOfOrigin;
    l.item.classificationIdentifiers = l.item.classificationIdentifiers.map(({ schemeVersion: _v, ...c }) => c);
    for (const ac of l.allowanceCharges) ac.baseAmount ??= '100.00';
  }
  return out;
}

describe('EN 16931 fixture → ebInterface 6.1 → model', () => {
  beforeAll(() => requirePacks(['ebinterface-xsd', 'ubl-2.1', 'cii-d16b', 'en16931-ubl', 'en16931-cii']));

  it('invoice (UBL) → ebInterface 6.1: golden, schema-valid, and back equal on what ebInterface carries', async () => {
    const r = transformDocument(writeUbl(fullInvoice()).xml, { targetFormat: 'ebinterface-6.1' });
    expect(r.report.target).toEqual({
      id: 'ebinterface-6.1',
      name: 'ebInterface 6.1',
      syntax: 'ebInterface',
      documentType: 'Invoice',
      customizationId: EBI,
    });
    expect(r.report.changed).toEqual([`BT-24 Specification identifier: "${EN16931}" → "${EBI}"`]);
    expect(r.report.notCarried).toEqual([
      'BT-6 VAT accounting currency code (and BT-111): ebInterface has no VAT accounting currency',
      'BT-11 Project reference',
      'BT-12 Contract reference',
      'BT-15 Receiving advice reference',
      'BT-17 Tender or lot reference',
      'BT-18 Invoiced object identifier',
      'BT-23 Business process type',
      'BG-10 Payee: ebInterface has no payee party',
      'BG-11 Seller tax representative: ebInterface has no tax representative party',
      'BG-24 Additional supporting documents: ebInterface has no attachments',
      'BT-34 Seller electronic address',
      'BT-49 Buyer electronic address',
      'BT-21 Invoice note subject code',
      'BT-10 Buyer reference: ebInterface has no buyer reference (BT-13 is the recipient order reference)',
      'BG-5 Seller address lines 2 and 3: ebInterface has one street line',
      'BT-128 Invoice line object identifier (line 1)',
      'BT-133 Invoice line buyer accounting reference (line 1)',
      'BT-147 / BT-148 Item price discount and gross price (line 1)',
      'BT-150 Item price base quantity unit of measure (line 1)',
      'BT-159 Item country of origin (line 1)',
      'BT-158-2 Item classification scheme version (line 1)',
      'BT-150 Item price base quantity unit of measure (line 2)',
      'BG-14 Invoicing period beside a delivery date: ebInterface Delivery holds a date or a period',
    ]);
    expect(r.report.filled).toEqual([
      'line 1: surcharge BaseAmount = 100.00 (quantity × price; mandatory in ebInterface)',
      'Surcharge 2 BaseAmount = BT-106 198.00 (mandatory in ebInterface; BT-100 absent)',
    ]);
    golden('invoice-to-ebinterface-6.1.xml', r.xml);
    await expectValid(r);
    const back = readEbInterface(parseXml(r.xml));
    expect(back.problems).toEqual([]);
    expect(back.unmapped).toEqual([{ path: '/Invoice/@GeneratingSystem', text: 'Invoice Gateway' }]);
    expect(JSON.parse(comparableCore(back.invoice))).toEqual(
      JSON.parse(comparableCore(carriedByEbInterface(fullInvoice()))),
    );
  });

  it('credit note (CII) → ebInterface 6.1 CreditMemo: golden and schema-valid', async () => {
    const r = transformDocument(writeCii(fullCreditNote()).xml, { targetFormat: 'ebinterface-6.1' });
    expect(r.report.target.documentType).toBe('CreditNote');
    expect(r.xml).toContain('DocumentType="CreditMemo"');
    golden('creditnote-to-ebinterface-6.1.xml', r.xml);
    await expectValid(r);
  });

  it.each([['en16931-ubl'], ['en16931-cii'], ['xrechnung-ubl']])(
    'the fixture in ebInterface 6.1 → %s is valid',
    async (target) => {
      const ebi = writeEbInterface(fullInvoice()).xml;
      if (target === 'xrechnung-ubl') {
        // ebInterface has no buyer reference or electronic addresses: XRechnung needs them, and says so.
        const e = refusal(() => transformDocument(ebi, { targetFormat: target }));
        expect(missingRules(e)).toEqual(['BR-DE-15', 'PEPPOL-EN16931-R020', 'PEPPOL-EN16931-R010']);
        return;
      }
      const r = transformDocument(ebi, { targetFormat: target });
      expect(r.report.source.id).toBe('ebinterface-6.1');
      expect(r.report.unmapped).toEqual([{ path: '/Invoice/@GeneratingSystem', text: 'Invoice Gateway' }]);
      golden(`ebinterface-to-${target}.xml`, r.xml);
      await expectValid(r);
    },
  );
});

describe('every EN 16931 document of the corpus → ebInterface 6.1', () => {
  beforeAll(() => requirePacks(['ebinterface-xsd']));

  const walk = (dir: string): string[] =>
    readdirSync(path.join(CORPUS_DIR, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : /\.(xml|pdf)$/i.test(e.name) ? [`${dir}/${e.name}`] : [],
    );
  const CORPUS = ['en16931/ubl-examples', 'en16931/cii-examples', 'nlcius', 'facturx'].flatMap(walk).sort();

  it('is schema-valid ebInterface 6.1, or a 400 / 422 naming why', async () => {
    const outcomes: Record<string, number> = {};
    for (const file of CORPUS) {
      let r: TransformResult;
      try {
        r = transformDocument(corpusFile(file), { targetFormat: 'ebinterface-6.1' });
      } catch (e) {
        if (!(e instanceof GatewayError)) throw e;
        const why =
          e.status === 422 ? missingRules(e).join(',') : ((e.details?.['reason'] as string | undefined) ?? e.code);
        outcomes[`${e.status} ${why}`] = (outcomes[`${e.status} ${why}`] ?? 0) + 1;
        continue;
      }
      const v = await errorsOf(r.xml);
      expect({ file, ...v }).toEqual({ file, format: 'ebinterface-6.1', errors: [] });
      outcomes['valid'] = (outcomes['valid'] ?? 0) + 1;
    }
    expect(outcomes['valid']).toBeGreaterThanOrEqual(170);
    // Refusals are what ebInterface requires beyond EN 16931, or documents the table does not convert.
    for (const k of Object.keys(outcomes))
      expect(k).toMatch(/^(valid|422 (EBI61-[A-Z0-9-]+,?)+|422 (BR-[A-Z0-9-]+,?)+|400 [A-Z_]+)$/);
  });
});

describe('400 and 422 for ebInterface', () => {
  const UBL = writeUbl(fullInvoice()).xml;

  it('the table: ebInterface sources to EN 16931 and 6.1; older ebInterface versions are not written', () => {
    expect(lookupTransformation('ebinterface-6.1', 'xrechnung-cii')).toEqual({ converter: 'en16931' });
    expect(lookupTransformation('ebinterface-5.0', 'ebinterface-6.1')).toEqual({ converter: 'en16931' });
    expect(lookupTransformation('facturx-en16931', 'ebinterface-6.1')).toEqual({ converter: 'en16931' });
    const e = refusal(() => transformDocument(UBL, { targetFormat: 'http://www.ebinterface.at/schema/6p0/' }));
    expect(e).toMatchObject({
      status: 400,
      details: { reason: 'TRANSFORMATION_NOT_SUPPORTED', targetFormat: 'ebinterface-6.0' },
    });
    expect(e.message).toMatch(/writes ebInterface 6\.1 only/);
    expect(refusal(() => transformDocument(UBL, { targetFormat: 'ebinterface-4.3' })).status).toBe(400);
  });

  it('422 names what ebInterface requires beyond EN 16931 (town and ZIP, decimals)', () => {
    const inv = fullInvoice();
    delete inv.seller.postalAddress!.city;
    delete inv.buyer.postalAddress!.postCode;
    inv.lines[1]!.price.netPrice = '50.00001';
    const e = refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: 'ebinterface-6.1' }));
    expect(e).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT', target: 'ebinterface-6.1' } });
    expect(missingRules(e)).toEqual(['EBI61-ADDRESS-BILLER', 'EBI61-ADDRESS-RECIPIENT', 'EBI61-DECIMAL4']);
    expect(e.message).toContain(
      'EBI61-ADDRESS-BILLER (BT-37, BT-38): ebInterface requires the seller (Biller) city (BT-37) and post code ' +
        '(BT-38)',
    );
  });

  it(
    '422 for ebInterface values the model cannot take: a tax category outside EN 16931, a bad date, an unknown ' +
      'DocumentType, totals that disagree',
    () => {
      const ebi = writeEbInterface(fullInvoice()).xml;
      const badCategory = ebi.replace(
        '<TaxPercent TaxCategoryCode="S">9</TaxPercent>',
        '<TaxPercent TaxCategoryCode="XY">9</TaxPercent>',
      );
      // the line's category is refused, and with it the 9 % breakdown no longer adds up
      expect(invalidTerms(refusal(() => transformDocument(badCategory, { targetFormat: 'en16931-ubl' })))).toEqual([
        'BT-151',
        'BT-116 BR-S-08',
      ]);
      const badDate = ebi.replace('<InvoiceDate>2026-11-02</InvoiceDate>', '<InvoiceDate>02.11.2026</InvoiceDate>');
      expect(refusal(() => transformDocument(badDate, { targetFormat: 'en16931-ubl' })).details).toMatchObject({
        invalid: [{ term: 'BT-2', path: '/Invoice/InvoiceDate' }],
      });
      const badType = ebi.replace('DocumentType="Invoice"', 'DocumentType="Quote"');
      expect(refusal(() => transformDocument(badType, { targetFormat: 'en16931-ubl' })).details).toMatchObject({
        invalid: [{ term: 'BT-3', message: 'DocumentType "Quote" is not an ebInterface document type' }],
      });
      const badTotal = ebi.replace(
        '<TotalGrossAmount>221.53</TotalGrossAmount>',
        '<TotalGrossAmount>221.54</TotalGrossAmount>',
      );
      expect(invalidTerms(refusal(() => transformDocument(badTotal, { targetFormat: 'en16931-cii' })))).toEqual([
        'BT-112 BR-CO-15',
        'BT-115 BR-CO-16',
      ]);
    },
  );

  it('maps DocumentType to BT-3 and back, and TaxCategoryCode AA (reduced rate) to S', () => {
    const ebi = writeEbInterface(fullInvoice()).xml;
    const partial = readEbInterface(
      parseXml(ebi.replace('DocumentType="Invoice"', 'DocumentType="InvoiceForPartialDelivery"')),
    );
    expect(partial.invoice.typeCode).toBe('326');
    expect(writeEbInterface(partial.invoice).xml).toContain('DocumentType="InvoiceForPartialDelivery"');
    const reduced = readEbInterface(parseXml(ebi.replace(/TaxCategoryCode="S">9</g, 'TaxCategoryCode="AA">9<')));
    expect(reduced.invoice.lines[1]!.vat).toEqual({ categoryCode: 'S', rate: '9' });
    const other = writeEbInterface({ ...fullInvoice(), typeCode: '384' });
    expect(other.notCarried).toContain(
      'BT-3 Invoice type code 384: ebInterface has no such document type; written as Invoice',
    );
  });

  it('payment means: SEPA direct debit and card in ebInterface map to BG-19 / BG-18 and back', () => {
    const dd = fullInvoice();
    dd.paymentInstructions = {
      meansTypeCode: '59',
      creditTransfers: [],
      directDebit: {
        mandateReference: 'M-1',
        bankAssignedCreditorIdentifier: 'AT12ZZZ00000000001',
        debitedAccountIdentifier: 'AT611904300234573201',
      },
    };
    const back = readEbInterface(parseXml(writeEbInterface(dd).xml));
    expect(back.invoice.paymentInstructions).toEqual(dd.paymentInstructions);
    const card = fullInvoice();
    card.paymentInstructions = {
      meansTypeCode: '48',
      creditTransfers: [],
      card: { primaryAccountNumber: '1234', holderName: 'A. Holder' },
    };
    expect(readEbInterface(parseXml(writeEbInterface(card).xml)).invoice.paymentInstructions).toEqual(
      card.paymentInstructions,
    );
  });
});
