import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { writeCii, writeUbl, type Invoice } from '../../../src/en16931';
import { EN16931, FACTURX_BASIC, FACTURX_EXTENDED, XRECHNUNG_3 } from '../../../src/formats/format-ids';
import { extractFromPdf } from '../../../src/formats';
import { srgbIccProfile } from '../../../src/formats/facturx/icc';
import { transformDocument, type TransformResult } from '../../../src/transform';
import { corpusFile } from '../../support/corpus';
import { requirePacks, validator } from '../validation/support';
import { fullCreditNote, fullInvoice } from './fixture';
import { refusal } from './support';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkPdfA } = require('../../../scripts/verapdf-harness.js') as {
  checkPdfA: (
    files: string[],
    flavour?: string,
  ) => { file: string; compliant?: boolean; error?: string; failures?: { rule: string; description: string }[] }[];
};

jest.setTimeout(600_000);

/**
 * Factur-X output: the PDF's structure (catalog /AF, file specification, embedded file stream, XMP), re-extraction of
 * the exact XML, the official Factur-X rules on the embedded CII, veraPDF's PDF/A-3B verdict, and the refusals.
 */

const DATE = new Date('2026-11-25T10:00:00Z');
const UBL = writeUbl(fullInvoice()).xml;
const CII_CN = writeCii(fullCreditNote()).xml;

function xrechnungReady(): Invoice {
  const inv = fullInvoice();
  inv.seller.postalAddress = { ...inv.seller.postalAddress, countryCode: 'DE' };
  inv.buyer.postalAddress = { ...inv.buyer.postalAddress, countryCode: 'DE' };
  inv.seller.contact = { point: 'Sales desk', telephone: '+49 30 123 4567', email: 'sales@example.de' };
  return inv;
}

/** The fixture without the terms Factur-X BASIC has no place for (the invoice's amounts are unaffected). */
function basicReady(): Invoice {
  const inv = fullInvoice();
  for (const k of [
    'projectReference',
    'salesOrderReference',
    'receivingAdviceReference',
    'tenderOrLotReference',
    'invoicedObjectIdentifier',
  ] as const)
    delete inv[k];
  delete inv.seller.contact;
  delete inv.buyer.contact;
  inv.supportingDocuments = [];
  for (const t of inv.paymentInstructions?.creditTransfers ?? []) {
    delete t.accountName;
    delete t.serviceProviderIdentifier;
  }
  for (const l of inv.lines) {
    delete l.objectIdentifier;
    delete l.purchaseOrderLineReference;
    delete l.buyerAccountingReference;
    for (const k of ['description', 'sellersIdentifier', 'buyersIdentifier', 'countryOfOrigin'] as const)
      delete l.item[k];
    l.item.classificationIdentifiers = [];
    l.item.attributes = [];
    for (const ac of l.allowanceCharges) {
      delete ac.baseAmount;
      delete ac.percentage;
    }
  }
  delete inv.buyer.tradingName;
  return inv;
}

const latin = (b: Buffer): string => b.toString('latin1');

/** The decoded body of the indirect object `n 0 obj` (stream data inflated when Flate-compressed). */
function streamOf(pdf: Buffer, dictPattern: RegExp): { dict: string; data: Buffer } {
  const text = latin(pdf);
  const m = dictPattern.exec(text);
  if (!m) throw new Error(`no object matching ${dictPattern}`);
  const start = text.indexOf('stream\n', m.index) + 'stream\n'.length;
  const end = text.indexOf('\nendstream', start);
  const dict = text.slice(m.index, start);
  const raw = pdf.subarray(start, end);
  return { dict, data: /\/Filter \/FlateDecode/.test(dict) ? inflateSync(raw) : raw };
}

const cases: { name: string; input: string | Buffer; target: string; filename: string; level: string; bt24: string }[] =
  [
    {
      name: 'UBL invoice → EN 16931',
      input: UBL,
      target: 'facturx-en16931',
      filename: 'factur-x.xml',
      level: 'EN 16931',
      bt24: EN16931,
    },
    {
      name: 'CII credit note → EN 16931',
      input: CII_CN,
      target: 'facturx-en16931',
      filename: 'factur-x.xml',
      level: 'EN 16931',
      bt24: EN16931,
    },
    {
      name: 'UBL invoice → EXTENDED (by URN)',
      input: UBL,
      target: FACTURX_EXTENDED,
      filename: 'factur-x.xml',
      level: 'EXTENDED',
      bt24: FACTURX_EXTENDED,
    },
    {
      name: 'slim UBL invoice → BASIC',
      input: writeUbl(basicReady()).xml,
      target: 'facturx-basic',
      filename: 'factur-x.xml',
      level: 'BASIC',
      bt24: FACTURX_BASIC,
    },
    {
      name: 'German invoice → XRECHNUNG',
      input: writeUbl(xrechnungReady()).xml,
      target: 'facturx-xrechnung',
      filename: 'xrechnung.xml',
      level: 'XRECHNUNG',
      bt24: XRECHNUNG_3,
    },
  ];

const CORPUS = [
  'en16931/cii-examples/CII_example1.xml',
  'en16931/cii-examples/huf_example_cii.xml',
  'en16931/ubl-examples/guide-example3.xml',
  'en16931/ubl-examples/FT G2G_TD01 con Allegato, Bonifico e Split Payment.xml',
];

const results = new Map<string, TransformResult>();
const produce = (c: (typeof cases)[number]): TransformResult => {
  let r = results.get(c.name);
  if (!r) {
    r = transformDocument(c.input, { targetFormat: c.target, date: DATE });
    results.set(c.name, r);
  }
  return r;
};

describe('Factur-X PDF output: structure', () => {
  it.each(cases)('$name: a PDF with the CII as $filename, /AF, XMP and OutputIntent', (c) => {
    const r = produce(c);
    expect(r.contentType).toBe('application/pdf');
    expect(r.pdf).toBeDefined();
    const pdf = r.pdf as Buffer;
    const text = latin(pdf);
    expect(text.startsWith('%PDF-1.7\n%')).toBe(true);
    // Binary comment: four bytes above 127 on the second line (ISO 19005 6.1.2).
    expect([...pdf.subarray(10, 14)].every((b) => b > 127)).toBe(true);
    expect(r.report.target).toMatchObject({
      id: c.target.startsWith('urn:') ? 'facturx-extended' : c.target,
      container: 'pdf',
      attachment: c.filename,
      customizationId: c.bt24,
    });
    expect(r.xml).toContain(`<ram:ID>${c.bt24}</ram:ID>`);

    // Catalog: /AF, the name tree, the OutputIntent, the metadata.
    const catalog = /\/Type \/Catalog[^]*?>>\nendobj/.exec(text)?.[0] ?? '';
    expect(catalog).toMatch(/\/AF \[ \d+ 0 R \]/);
    expect(catalog).toContain('/OutputIntents');
    expect(catalog).toContain('/S /GTS_PDFA1');
    expect(catalog).toMatch(/\/Metadata \d+ 0 R/);
    expect(catalog).toMatch(
      new RegExp(`/EmbeddedFiles <<\\s*/Names \\[ \\(${c.filename.replace('.', '\\.')}\\) \\d+ 0 R \\]`),
    );
    expect(text).not.toContain('/Encrypt');
    // File specification and embedded file stream.
    const filespec = /\/Type \/Filespec[^]*?endobj/.exec(text)?.[0] ?? '';
    expect(filespec).toContain(`/F (${c.filename})`);
    expect(filespec).toContain('/AFRelationship /Alternative');
    const ef = streamOf(pdf, /<<\n\/Type \/EmbeddedFile/);
    expect(ef.dict).toContain('/Subtype /text#2Fxml');
    expect(ef.dict).toMatch(
      new RegExp(
        `/Params <<\\n/ModDate \\(D:20261125100000\\+00'00'\\)\\n/CreationDate ` +
          `\\(D:20261125100000\\+00'00'\\)\\n/Size ${Buffer.byteLength(r.xml)}\\n>>`,
      ),
    );
    expect(ef.data.toString('utf8')).toBe(r.xml);
    // Trailer: document ID, two equal identifiers.
    expect(text).toMatch(/trailer\n<< \/Size \d+ \/Root \d+ 0 R \/Info \d+ 0 R \/ID \[<([0-9A-F]{32})> <\1>\] >>/);
    // Fonts: embedded subsets only.
    expect(text).toMatch(/\/FontFile2 \d+ 0 R/);
    expect(text).toMatch(/\/BaseFont \/[A-Z]{6}\+DejaVuSans\b/);
    expect(text).toMatch(/\/BaseFont \/[A-Z]{6}\+DejaVuSans-Bold\b/);

    // XMP: PDF/A identification, Factur-X schema and its extension schema description, Info mirrored.
    const xmp = streamOf(pdf, /<<\n\/Type \/Metadata/);
    expect(xmp.dict).not.toContain('/Filter');
    const x = xmp.data.toString('utf8');
    expect(x).toContain('<pdfaid:part>3</pdfaid:part>');
    expect(x).toContain('<pdfaid:conformance>B</pdfaid:conformance>');
    expect(x).toContain('<fx:DocumentType>INVOICE</fx:DocumentType>');
    expect(x).toContain(`<fx:DocumentFileName>${c.filename}</fx:DocumentFileName>`);
    expect(x).toContain('<fx:Version>1.0</fx:Version>');
    expect(x).toContain(`<fx:ConformanceLevel>${c.level}</fx:ConformanceLevel>`);
    expect(x).toContain(
      '<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>',
    );
    for (const p of ['DocumentFileName', 'DocumentType', 'Version', 'ConformanceLevel'])
      expect(x).toContain(`<pdfaProperty:name>${p}</pdfaProperty:name>`);
    expect(x).toContain('<xmp:CreateDate>2026-11-25T10:00:00+00:00</xmp:CreateDate>');
    expect(text).toContain("/CreationDate (D:20261125100000+00'00')");
  });

  it.each(cases)('$name: extractFromPdf reads back the same XML, byte for byte', (c) => {
    const r = produce(c);
    const back = extractFromPdf(r.pdf as Buffer);
    expect(back.filename).toBe(c.filename);
    expect(back.xml.equals(Buffer.from(r.xml, 'utf8'))).toBe(true);
  });

  it('the same input and date give the same bytes', () => {
    const a = transformDocument(UBL, { targetFormat: 'facturx-en16931', date: DATE }).pdf as Buffer;
    const b = transformDocument(UBL, { targetFormat: 'facturx-en16931', date: DATE }).pdf as Buffer;
    expect(a.equals(b)).toBe(true);
  });

  it('a PDF is a source too: Factur-X in, XML out', () => {
    const r = produce(cases[0] as (typeof cases)[number]);
    const back = transformDocument(r.pdf as Buffer, { targetFormat: 'en16931-ubl' });
    expect(back.report.source.id).toBe('facturx-en16931');
    expect(back.contentType).toBe('application/xml');
  });

  it('any source the model reads becomes a Factur-X PDF: FatturaPA and ebInterface too', () => {
    // The ebInterface sample without its below-the-line item, which EN 16931 has no term for (as in
    // ebinterface.test.ts).
    const ebi = corpusFile('ebinterface/ebinterface/ebi61/ebinterface_6p1_sample_ph1.xml')
      .toString('utf8')
      .replace(/<BelowTheLineItem>[\s\S]*<\/BelowTheLineItem>/, '')
      .replace('<PayableAmount>13.5</PayableAmount>', '<PayableAmount>12</PayableAmount>');
    for (const source of [readFileSync(path.join(__dirname, 'fatturapa/goods-22.xml')), ebi]) {
      const r = transformDocument(source, { targetFormat: 'facturx-en16931', date: DATE });
      expect(r.contentType).toBe('application/pdf');
      expect(extractFromPdf(r.pdf as Buffer).xml.toString('utf8')).toBe(r.xml);
    }
  });

  it('characters the font lacks are drawn as "?" and reported, the XML keeps them', () => {
    const inv = fullInvoice();
    inv.lines[0]!.item.name = 'Widget 中文';
    const r = transformDocument(writeUbl(inv).xml, { targetFormat: 'facturx-en16931', date: DATE });
    expect(r.report.notCarried.join('\n')).toMatch(/drawn as '\?': "中", "文"/);
    expect(r.xml).toContain('Widget 中文');
  });

  it('the sRGB ICC profile has a consistent header and tag table', () => {
    const icc = srgbIccProfile();
    expect(icc.readUInt32BE(0)).toBe(icc.length);
    expect(latin(icc.subarray(12, 24))).toBe('mntrRGB XYZ ');
    expect(latin(icc.subarray(36, 40))).toBe('acsp');
    const count = icc.readUInt32BE(128);
    for (let k = 0; k < count; k++) {
      const offset = icc.readUInt32BE(132 + 12 * k + 4);
      const size = icc.readUInt32BE(132 + 12 * k + 8);
      expect(offset % 4).toBe(0);
      expect(offset + size).toBeLessThanOrEqual(icc.length);
    }
  });
});

describe('Factur-X PDF output: refusals', () => {
  it.each([
    ['facturx-minimum', /MINIMUM and BASIC WL/],
    ['facturx-basicwl', /MINIMUM and BASIC WL/],
    ['facturx-extended-ctc-fr', /CTC/],
  ])('%s → 400 TRANSFORMATION_NOT_SUPPORTED', (target, why) => {
    const e = refusal(() => transformDocument(UBL, { targetFormat: target }));
    expect(e).toMatchObject({ status: 400, details: { reason: 'TRANSFORMATION_NOT_SUPPORTED' } });
    expect(e.message).toMatch(why);
  });

  it('XRECHNUNG without what XRechnung requires → 422 with the rules', () => {
    const inv = fullInvoice();
    delete inv.buyerReference;
    const e = refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: 'facturx-xrechnung' }));
    expect(e.status).toBe(422);
    expect((e.details as { missing: { rule: string }[] }).missing.map((m) => m.rule)).toContain('BR-DE-15');
  });

  it('BASIC for an invoice with terms BASIC has no place for → 422 naming each of them', () => {
    const e = refusal(() => transformDocument(UBL, { targetFormat: 'facturx-basic' }));
    expect(e.status).toBe(422);
    const rules = (e.details as { missing: { rule: string; terms: string[] }[] }).missing.map((m) => m.rule);
    expect(rules).toEqual(
      expect.arrayContaining([
        'FX-BASIC-BT-11',
        'FX-BASIC-BG-6',
        'FX-BASIC-BT-154',
        'FX-BASIC-BG-32',
        'FX-BASIC-BG-24',
        'FX-BASIC-BT-137',
      ]),
    );
    expect(e.message).toMatch(/Factur-X BASIC has no place for/);
  });

  it('an invoice without lines → 422 (BR-16), never a PDF without the invoice', () => {
    const inv = fullInvoice();
    inv.lines = [];
    const e = refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: 'facturx-en16931' }));
    expect(e.status).toBe(422);
  });
});

describe('Factur-X PDF output: official checks', () => {
  beforeAll(() =>
    requirePacks(['facturx-basic', 'facturx-en16931', 'facturx-extended', 'xrechnung-cii', 'en16931-cii']),
  );

  it.each(cases)('$name: the embedded CII passes the official rules of its profile', async (c) => {
    const r = produce(c);
    // Validated as the PDF, so the gateway's own detection picks the profile from the embedded XML.
    const v = await validator().validate(r.pdf as Buffer);
    const errors = v.assertions.filter((a) => a.flag === 'error').map((a) => `${a.ruleId}: ${a.text.slice(0, 160)}`);
    expect({ format: v.format.id, errors }).toEqual({ format: v.format.id, errors: [] });
  });
});

describe('Factur-X PDF output: PDF/A-3B (veraPDF)', () => {
  it('veraPDF: every produced PDF is PDF/A-3B; one without OutputIntent or with a damaged font is not', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'facturx-pdfa-'));
    try {
      const files = cases.map((c, k) => {
        const f = path.join(dir, `ok-${k}.pdf`);
        writeFileSync(f, produce(c).pdf as Buffer);
        return f;
      });
      // Broken on purpose, renaming a key to one of the same length so the cross-reference table stays right: no
      // OutputIntent, and fonts whose program is no longer attached (not embedded).
      const good = latin(produce(cases[0] as (typeof cases)[number]).pdf as Buffer);
      const broken = [
        good.replace('/OutputIntents', '/OutputIntentX'),
        good.replaceAll('/FontFile2', '/FontFileX'),
      ].map((text, k) => {
        const f = path.join(dir, `broken-${k}.pdf`);
        writeFileSync(f, Buffer.from(text, 'latin1'));
        return f;
      });
      // Public documents too (other parties, long texts, Italian and Hungarian data), as EN 16931 PDFs.
      for (const [k, name] of CORPUS.entries()) {
        const r = transformDocument(corpusFile(name), { targetFormat: 'facturx-en16931', date: DATE });
        expect(extractFromPdf(r.pdf as Buffer).xml.toString('utf8')).toBe(r.xml);
        const f = path.join(dir, `corpus-${k}.pdf`);
        writeFileSync(f, r.pdf as Buffer);
        files.push(f);
      }
      const verdicts = checkPdfA([...files, ...broken]);
      for (const v of verdicts.slice(0, files.length))
        expect({ file: path.basename(v.file), compliant: v.compliant, failures: v.failures }).toEqual({
          file: path.basename(v.file),
          compliant: true,
          failures: [],
        });
      const [noIntent, noFont] = verdicts.slice(files.length);
      expect(noIntent?.compliant).toBe(false);
      expect(noIntent?.failures?.map((f) => f.description).join('\n')).toMatch(/OutputIntent|colour space/i);
      expect(noFont?.compliant).toBe(false);
      expect(noFont?.failures?.map((f) => f.description).join('\n')).toMatch(/embedded/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
