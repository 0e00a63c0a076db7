import { deflateSync } from 'node:zlib';
import { AFRelationship, PDFDocument } from 'pdf-lib';
import { GatewayError } from '../../../src/core/gateway-error';
import { extractFromPdf, readHybridPdf } from '../../../src/formats';
import { PdfCanvas, writeHybridPdf, type HybridAttachment } from '../../../src/formats/facturx/pdf-writer';
import { checkFacturxPdf, type FacturxPdfResult } from '../../../src/validation/facturx-pdf';
import { corpusFile } from '../../support/corpus';
import { requirePacks, validator } from './support';

/**
 * The PDF layer of Factur-X / ZUGFeRD hybrid invoices (rule set `facturx-pdf`): our own writer's output passes every
 * check, and each broken variant fails exactly the check it breaks.
 */

const DATE = new Date('2026-11-25T10:00:00Z');
/** A real EN 16931 CII invoice (valid, see corpus.test.ts), to embed in our own PDFs. */
const EN16931_XML = extractFromPdf(corpusFile('facturx/mustang/EN16931_Einfach.pdf')).xml;

function writePdf(over: Partial<HybridAttachment> = {}): Buffer {
  const canvas = new PdfCanvas();
  canvas.addPage().text(50, 780, 'Rechnung 471102');
  return writeHybridPdf(
    canvas,
    {
      filename: 'factur-x.xml',
      bytes: EN16931_XML,
      relationship: 'Alternative',
      description: 'Factur-X invoice',
      conformanceLevel: 'EN 16931',
      version: '1.0',
      ...over,
    },
    {
      title: 'Invoice 471102',
      author: 'Lieferant GmbH',
      subject: 'Invoice',
      creator: 'test',
      producer: 'test',
      date: DATE,
    },
  );
}

const GOOD = writePdf();
const latin = (b: Buffer): string => b.toString('latin1');

/** The PDF with `from` replaced by `to` (which must occur exactly once). */
function edit(pdf: Buffer, from: string, to: string): Buffer {
  const text = latin(pdf);
  const count = text.split(from).length - 1;
  if (count !== 1) throw new Error(`"${from}" occurs ${count} times in the PDF`);
  return Buffer.from(text.replace(from, to), 'latin1');
}

/**
 * The PDF with its XMP metadata object replaced: `data` as the stream's bytes, `dict` as extra dictionary entries
 * (e.g. a filter). Offsets in the cross-reference table go stale, which the reader does not use.
 */
function withXmp(pdf: Buffer, data: Buffer, dict = ''): Buffer {
  const text = latin(pdf);
  const at = text.indexOf('/Type /Metadata');
  const head = /(\d+) 0 obj\s*$/.exec(text.slice(Math.max(0, at - 40), at).replace(/<<\s*$/, ''));
  if (at === -1 || !head) throw new Error('no XMP object in the PDF');
  const start = text.lastIndexOf(`${head[1]} 0 obj`, at);
  const end = text.indexOf('endobj', at) + 'endobj'.length;
  const obj = Buffer.concat([
    Buffer.from(
      `${head[1]} 0 obj\n<< /Type /Metadata /Subtype /XML${dict} /Length ${data.length} >>\nstream\n`,
      'latin1',
    ),
    data,
    Buffer.from('\nendstream\nendobj', 'latin1'),
  ]);
  return Buffer.concat([pdf.subarray(0, start), obj, pdf.subarray(end)]);
}

function xmpOf(pdf: Buffer): string {
  const xmp = readHybridPdf(pdf).layer.xmp;
  if (!xmp) throw new Error('no XMP');
  return xmp.toString('utf8');
}

function check(pdf: Buffer, formatId = 'facturx-en16931'): FacturxPdfResult {
  const { attachment, layer } = readHybridPdf(pdf);
  return checkFacturxPdf(layer, { attachmentFilename: attachment.filename, formatId });
}

const ruleIds = (r: FacturxPdfResult, flag: 'error' | 'warning' = 'error'): string[] =>
  r.assertions.filter((a) => a.flag === flag).map((a) => a.ruleId);

describe('Factur-X PDF layer: our writer', () => {
  it('a conformant PDF from our writer passes every check', () => {
    const r = check(GOOD);
    expect(r.assertions).toEqual([]);
    expect(r.outcome).toEqual({ id: 'facturx-pdf', version: '1.0', outcome: 'passed' });
    // The facts the checks judge, read from the PDF.
    const { layer } = readHybridPdf(GOOD);
    expect(layer).toMatchObject({ encrypted: false, catalog: true, afRelationship: 'Alternative', inCatalogAf: true });
  });

  it.each([
    ['facturx-basic', 'BASIC', 'factur-x.xml'],
    ['facturx-extended', 'EXTENDED', 'factur-x.xml'],
    ['facturx-xrechnung', 'XRECHNUNG', 'xrechnung.xml'],
  ])('%s with ConformanceLevel %s in %s passes', (formatId, conformanceLevel, filename) => {
    expect(check(writePdf({ conformanceLevel, filename }), formatId).assertions).toEqual([]);
  });

  it('MINIMUM and BASIC WL pass with /Data', () => {
    expect(
      check(writePdf({ conformanceLevel: 'MINIMUM', relationship: 'Data' }), 'facturx-minimum').assertions,
    ).toEqual([]);
    expect(
      check(writePdf({ conformanceLevel: 'BASIC WL', relationship: 'Data' }), 'facturx-basicwl').assertions,
    ).toEqual([]);
  });
});

describe('Factur-X PDF layer: each check fails on the PDF that breaks it', () => {
  const cases: Array<[string, () => Buffer, string, string]> = [
    [
      'FX-PDF-01: no /Metadata in the catalog',
      () => edit(GOOD, '/Metadata 1', '/Metadatx 1'),
      'FX-PDF-01',
      '/Catalog/Metadata',
    ],
    [
      'FX-PDF-01: XMP that is not well-formed XML',
      () => edit(GOOD, '</x:xmpmeta>', '</x:xmpmetx>'),
      'FX-PDF-01',
      '/Catalog/Metadata',
    ],
    [
      'FX-PDF-02: PDF/A-2 instead of PDF/A-3',
      () => edit(GOOD, '<pdfaid:part>3<', '<pdfaid:part>2<'),
      'FX-PDF-02',
      '/Catalog/Metadata/pdfaid',
    ],
    [
      'FX-PDF-02: conformance in lower case',
      () => edit(GOOD, '<pdfaid:conformance>B<', '<pdfaid:conformance>b<'),
      'FX-PDF-02',
      '/Catalog/Metadata/pdfaid',
    ],
    [
      'FX-PDF-02: no PDF/A identification',
      () =>
        edit(GOOD, 'xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"', 'xmlns:pdfaid="http://www.aiim.org/pdfa/ns/ix/"'),
      'FX-PDF-02',
      '/Catalog/Metadata/pdfaid',
    ],
    [
      'FX-PDF-03: Factur-X properties in an unknown namespace',
      () => edit(GOOD, 'xmlns:fx="urn:factur-x:pdfa', 'xmlns:fx="urn:factur-y:pdfa'),
      'FX-PDF-03',
      '/Catalog/Metadata/fx:DocumentType',
    ],
    [
      'FX-PDF-03: DocumentType other than INVOICE',
      () => edit(GOOD, '<fx:DocumentType>INVOICE<', '<fx:DocumentType>ORDERS!<'),
      'FX-PDF-03',
      '/Catalog/Metadata/fx:DocumentType',
    ],
    [
      'FX-PDF-03: no fx:DocumentType',
      () => edit(GOOD, '<fx:DocumentType>INVOICE</fx:DocumentType>', '<!-- no DocumentType -->'),
      'FX-PDF-03',
      '/Catalog/Metadata/fx:DocumentType',
    ],
    [
      'FX-PDF-03: no fx:Version',
      () => edit(GOOD, '<fx:Version>1.0</fx:Version>', '<!-- Version  -->'),
      'FX-PDF-03',
      '/Catalog/Metadata/fx:Version',
    ],
    [
      'FX-PDF-04: no extension schema for the namespace',
      () => edit(GOOD, '<pdfaSchema:namespaceURI>urn:factur-x', '<pdfaSchema:namespaceURI>urn:factur-y'),
      'FX-PDF-04',
      '/Catalog/Metadata/pdfaExtension:schemas',
    ],
    [
      'FX-PDF-04: a property the extension schema does not describe',
      () => edit(GOOD, '<pdfaProperty:name>Version<', '<pdfaProperty:name>Versiom<'),
      'FX-PDF-04',
      '/Catalog/Metadata/pdfaExtension:schemas',
    ],
    [
      'FX-PDF-05: DocumentFileName other than the embedded file',
      () => edit(GOOD, '<fx:DocumentFileName>factur-x.xml<', '<fx:DocumentFileName>invoice-1.xml<'),
      'FX-PDF-05',
      '/Catalog/Metadata/fx:DocumentFileName',
    ],
    [
      'FX-PDF-06: ConformanceLevel of another profile',
      () => writePdf({ conformanceLevel: 'EXTENDED' }),
      'FX-PDF-06',
      '/Catalog/Metadata/fx:ConformanceLevel',
    ],
    [
      'FX-PDF-07: AFRelationship Supplement',
      () => writePdf({ relationship: 'Supplement' }),
      'FX-PDF-07',
      '/Catalog/Names/EmbeddedFiles/AFRelationship',
    ],
    [
      'FX-PDF-07: no AFRelationship',
      () => edit(GOOD, '/AFRelationship', '/AFRelationshiq'),
      'FX-PDF-07',
      '/Catalog/Names/EmbeddedFiles/AFRelationship',
    ],
    ['FX-PDF-08: catalog without /AF', () => edit(GOOD, '/AF [', '/AX ['), 'FX-PDF-08', '/Catalog/AF'],
    ['FX-PDF-09: encrypted', () => edit(GOOD, ' /ID [', ' /Encrypt 99 0 R /ID ['), 'FX-PDF-09', '/Trailer/Encrypt'],
  ];

  it.each(cases)('%s', (_name, make, ruleId, location) => {
    const r = check(make());
    expect(ruleIds(r)).toEqual([ruleId]);
    expect(r.outcome.outcome).toBe('failed');
    const a = r.assertions[0]!;
    expect(a).toMatchObject({ artifact: 'business-rules', flag: 'error', reasonCode: 'BV', ruleSet: 'facturx-pdf' });
    expect(a.location).toBe(location);
    expect(a.text.length).toBeGreaterThan(20);
  });

  it('FX-PDF-07: MINIMUM and BASIC WL require /Data', () => {
    const r = check(writePdf({ conformanceLevel: 'MINIMUM' }), 'facturx-minimum');
    expect(ruleIds(r)).toEqual(['FX-PDF-07']);
    expect(r.assertions[0]!.text).toContain('requires /Data');
    expect(ruleIds(check(writePdf({ conformanceLevel: 'BASIC WL' }), 'facturx-basicwl'))).toEqual(['FX-PDF-07']);
  });

  it('FX-PDF-06: BASIC WL written as BASICWL is not the level the specification names', () => {
    const r = check(writePdf({ conformanceLevel: 'BASICWL', relationship: 'Data' }), 'facturx-basicwl');
    expect(ruleIds(r)).toEqual(['FX-PDF-06']);
  });

  it('PDF/A-4f is reported as a warning, not an error', () => {
    const pdf = edit(
      edit(GOOD, '<pdfaid:part>3<', '<pdfaid:part>4<'),
      '<pdfaid:conformance>B<',
      '<pdfaid:conformance>F<',
    );
    const r = check(pdf);
    expect(ruleIds(r)).toEqual([]);
    expect(ruleIds(r, 'warning')).toEqual(['FX-PDF-02']);
    expect(r.assertions[0]!.reasonCode).toBe('BW');
    expect(r.outcome.outcome).toBe('passed');
  });
});

describe('Factur-X PDF layer: XMP written in other valid ways', () => {
  it('properties as attributes of rdf:Description, in one description, and a Flate-compressed packet', () => {
    const xmp = xmpOf(GOOD);
    const fx = /<rdf:Description rdf:about="" xmlns:fx="([^"]+)">[\s\S]*?<\/rdf:Description>/.exec(xmp)!;
    const pdfaid = /<rdf:Description rdf:about="" xmlns:pdfaid="[^"]+">[\s\S]*?<\/rdf:Description>/.exec(xmp)!;
    const asAttributes = xmp
      .replace(
        fx[0],
        `<rdf:Description rdf:about="" xmlns:fx="${fx[1]}" fx:DocumentType="INVOICE" ` +
          'fx:DocumentFileName="factur-x.xml" fx:Version="1.0" fx:ConformanceLevel="EN 16931"/>',
      )
      .replace(
        pdfaid[0],
        '<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="3" ' +
          'pdfaid:conformance="U"/>',
      );
    expect(asAttributes).not.toContain('<fx:DocumentType>');
    const pdf = withXmp(GOOD, deflateSync(Buffer.from(asAttributes, 'utf8')), ' /Filter /FlateDecode');
    expect(check(pdf).assertions).toEqual([]);
    // The same packet with a wrong attribute value still fails.
    const wrong = withXmp(
      GOOD,
      Buffer.from(asAttributes.replace('fx:ConformanceLevel="EN 16931"', 'fx:ConformanceLevel="BASIC"')),
    );
    expect(ruleIds(check(wrong))).toEqual(['FX-PDF-06']);
  });

  it('the ZUGFeRD 2.0 namespace is accepted, with its own extension schema', () => {
    const pdf = Buffer.from(
      latin(GOOD).replaceAll(
        'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#',
        'urn:zugferd:pdfa:CrossIndustryDocument:invoice:2p0#',
      ),
      'latin1',
    );
    expect(check(pdf).assertions).toEqual([]);
  });
});

describe('Factur-X PDF layer: how the catalog is found', () => {
  it('a /Root that points nowhere falls back to the /Type /Catalog dictionary', () => {
    const root = /\/Root (\d+) 0 R/.exec(latin(GOOD))!;
    const pdf = edit(GOOD, root[0], `/Root ${'9'.repeat(root[1]!.length)} 0 R`);
    expect(check(pdf).assertions).toEqual([]);
  });

  it('a PDF from pdf-lib (catalog in an object stream, no XMP) is found and fails on the XMP only', async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    doc.addPage([595, 842]).drawText('Rechnung 471102', { x: 50, y: 780 });
    await doc.attach(EN16931_XML, 'factur-x.xml', {
      mimeType: 'text/xml',
      description: 'invoice',
      afRelationship: AFRelationship.Alternative,
    });
    const pdf = Buffer.from(await doc.save({ useObjectStreams: true }));
    expect(latin(pdf)).toContain('/ObjStm');
    const { layer } = readHybridPdf(pdf);
    expect(layer).toMatchObject({ catalog: true, afRelationship: 'Alternative', inCatalogAf: true });
    expect(ruleIds(check(pdf))).toEqual(['FX-PDF-01']);
  });
});

describe('Factur-X PDF layer: hostile XMP', () => {
  it('an entity bomb in the XMP is refused by the secure parser, quickly', () => {
    const bomb =
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaaaaaaaaaaaa">' +
      Array.from(
        { length: 9 },
        (_, k) => `<!ENTITY ${'b'.repeat(k + 1)} "${`&${k === 0 ? 'a' : 'b'.repeat(k)};`.repeat(10)}">`,
      ).join('') +
      ']><x:xmpmeta xmlns:x="adobe:ns:meta/">&bbbbbbbbb;</x:xmpmeta>';
    const started = Date.now();
    const r = check(withXmp(GOOD, Buffer.from(bomb, 'utf8')));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ruleIds(r)).toEqual(['FX-PDF-01']);
    expect(r.assertions[0]!.text).toMatch(/not well-formed, safe XML/);
  });

  it('an XMP stream that inflates past 1 MiB is cut off at the cap and reported', () => {
    const huge = deflateSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    expect(huge.length).toBeLessThan(200 * 1024);
    const started = Date.now();
    const pdf = withXmp(GOOD, huge, ' /Filter /FlateDecode');
    const { layer } = readHybridPdf(pdf);
    expect(layer.xmp).toBeUndefined();
    expect(layer.xmpError).toMatch(/exceeds 1048576 bytes/);
    const r = check(pdf);
    expect(ruleIds(r)).toEqual(['FX-PDF-01']);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('an XMP with an unsupported filter is reported, not thrown', () => {
    const r = check(withXmp(GOOD, Buffer.from('garbage'), ' /Filter /LZWDecode'));
    expect(ruleIds(r)).toEqual(['FX-PDF-01']);
    expect(r.assertions[0]!.text).toMatch(/LZWDecode/);
  });

  it('the attachment caps still hold when the layer is read', () => {
    expect(() => readHybridPdf(GOOD, { maxXmlBytes: 100, xmlRatioFloorBytes: 100 })).toThrow(GatewayError);
  });
});

describe('Factur-X PDF layer: real PDFs written by others (facturx/mustang)', () => {
  // veraPDF (scripts/verapdf-harness.js, flavour 3b) finds the first three compliant PDF/A-3B.
  it.each(['EN16931_Einfach.pdf', 'EN16931_1_Teilrechnung.pdf', 'MustangBeispiel20221026.pdf'])(
    '%s passes every check',
    (name) => {
      const pdf = corpusFile(`facturx/mustang/${name}`);
      expect(check(pdf).assertions).toEqual([]);
    },
  );

  it('EXTENDED_Fremdwaehrung_wdis_fx-pdfa4.pdf (PDF/A-4f, two rdf:RDF, attributes) passes with the PDF/A-4f warning', () => {
    // veraPDF finds it compliant with PDF/A-4f (flavour 4f); Factur-X 1.0 names PDF/A-3, hence the warning.
    const r = check(corpusFile('facturx/mustang/EXTENDED_Fremdwaehrung_wdis_fx-pdfa4.pdf'), 'facturx-extended');
    expect(ruleIds(r)).toEqual([]);
    expect(ruleIds(r, 'warning')).toEqual(['FX-PDF-02']);
  });

  it('ZTESTZUGFERD_1_INVDSS_012015738820PDF-1.pdf (ZUGFeRD 2.0) fails on its lower-case pdfaid:conformance "u"', () => {
    // A real defect: veraPDF rejects this file for PDF/A-3B, among others on 6.6.4-3 ("A Level U conforming file shall
    // specify the value of pdfaid:conformance as U"); the XMP carries `<pdfaid:conformance>u</pdfaid:conformance>`.
    const r = check(corpusFile('facturx/mustang/ZTESTZUGFERD_1_INVDSS_012015738820PDF-1.pdf'), 'facturx-extended');
    expect(ruleIds(r)).toEqual(['FX-PDF-02']);
    expect(r.assertions[0]!.text).toContain('"u"');
  });
});

describe('Factur-X PDF layer in the validator', () => {
  beforeAll(() => requirePacks(['facturx-xsd', 'facturx-en16931']));
  jest.setTimeout(120_000);

  it('a conformant PDF is valid and reports the facturx-pdf rule set', async () => {
    const v = await validator().validate(GOOD);
    expect(v.format.id).toBe('facturx-en16931');
    expect(v.ruleSets.map((s) => [s.id, s.outcome])).toEqual([
      ['facturx-xsd', 'passed'],
      ['facturx-en16931', 'passed'],
      ['facturx-pdf', 'passed'],
    ]);
    expect(v.ruleSets.find((s) => s.id === 'facturx-pdf')!.version).toBe('1.0');
    expect(v.assertions.filter((a) => a.flag === 'error')).toEqual([]);
    expect(v.isValid).toBe(true);
  });

  it('the same invoice in a PDF without the PDF/A-3 identification is not valid', async () => {
    const v = await validator().validate(edit(GOOD, '<pdfaid:part>3<', '<pdfaid:part>1<'));
    expect(v.isValid).toBe(false);
    expect(v.ruleSets.map((s) => [s.id, s.outcome])).toEqual([
      ['facturx-xsd', 'passed'],
      ['facturx-en16931', 'passed'],
      ['facturx-pdf', 'failed'],
    ]);
    const errors = v.assertions.filter((a) => a.flag === 'error');
    expect(errors.map((a) => [a.ruleSet, a.ruleId, a.location])).toEqual([
      ['facturx-pdf', 'FX-PDF-02', '/Catalog/Metadata/pdfaid'],
    ]);
    // Only the fields of an assertion (decisions.md "Validate").
    expect(Object.keys(errors[0]!).sort()).toEqual(
      ['artifact', 'flag', 'location', 'reasonCode', 'ruleId', 'ruleSet', 'text'].sort(),
    );
  });

  it('bare XML gets no facturx-pdf rule set', async () => {
    const v = await validator().validate(EN16931_XML);
    expect(v.ruleSets.map((s) => s.id)).not.toContain('facturx-pdf');
  });
});
