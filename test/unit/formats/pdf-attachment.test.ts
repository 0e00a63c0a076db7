import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { AFRelationship, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, decodePDFRawStream } from 'pdf-lib';
import { GatewayError } from '../../../src/core/gateway-error';
import { detectFormat } from '../../../src/formats/detect';
import { extractFromPdf, isPdf } from '../../../src/formats/facturx/pdf-attachment';
import { XRECHNUNG_3 } from '../../../src/formats/format-ids';
import { NS } from '../../../src/formats/xml/namespaces';
import { runBounded } from '../../support/bounded-process';
import { requireCorpus } from '../../support/corpus';

const MUSTANG = requireCorpus('facturx/mustang');

function ciiXml(guidelineId: string): Buffer {
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<rsm:CrossIndustryInvoice xmlns:rsm="${NS.rsm}" xmlns:ram="${NS.ram}">` +
      `<rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>${guidelineId}</ram:ID>` +
      '</ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>' +
      '<rsm:ExchangedDocument><ram:ID>F-1</ram:ID><ram:TypeCode>380</ram:TypeCode></rsm:ExchangedDocument></rsm:CrossIndustryInvoice>',
    'utf8',
  );
}

async function hybridPdf(
  attachments: Array<[name: string, bytes: Uint8Array]>,
  useObjectStreams = true,
): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([595, 842]).drawText('Rechnung F-1', { x: 50, y: 780 });
  for (const [name, bytes] of attachments) {
    await doc.attach(bytes, name, {
      mimeType: 'text/xml',
      description: 'invoice data',
      afRelationship: AFRelationship.Alternative,
    });
  }
  return Buffer.from(await doc.save({ useObjectStreams }));
}

/** The same extraction done through pdf-lib's (asynchronous) document loader, to cross-check the reader. */
async function viaPdfLibLoader(pdf: Buffer): Promise<Array<{ name: string; size: number }>> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  const out: Array<{ name: string; size: number }> = [];
  const visit = (node: unknown): void => {
    if (!(node instanceof PDFDict)) return;
    const names = node.lookup(PDFName.of('Names'));
    if (names instanceof PDFArray) {
      for (let k = 0; k + 1 < names.size(); k += 2) {
        const spec = names.lookup(k + 1, PDFDict);
        const stream = spec.lookup(PDFName.of('EF'), PDFDict).lookup(PDFName.of('F'));
        const key = names.lookup(k) as unknown as { decodeText(): string };
        if (stream instanceof PDFRawStream)
          out.push({ name: key.decodeText(), size: decodePDFRawStream(stream).decode().length });
      }
    }
    const kids = node.lookup(PDFName.of('Kids'));
    if (kids instanceof PDFArray) for (let k = 0; k < kids.size(); k++) visit(kids.lookup(k));
  };
  const root = doc.catalog.lookup(PDFName.of('Names'));
  if (root instanceof PDFDict) visit(root.lookup(PDFName.of('EmbeddedFiles')));
  return out;
}

/** A PDF whose factur-x.xml is `stored`, written with the given /Filter (a name or an array of names). */
function pdfWithAttachment(stored: Buffer, filter: string): Buffer {
  return Buffer.concat([
    Buffer.from(
      '%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Names << /EmbeddedFiles << /Names [(factur-x.xml) 2 0 R] >> >> >>',
    ),
    Buffer.from(
      '\nendobj\n2 0 obj\n<< /Type /Filespec /F (factur-x.xml) /UF (factur-x.xml) /EF << /F 3 0 R >> >>\nendobj\n',
    ),
    Buffer.from(`3 0 obj\n<< /Type /EmbeddedFile /Filter ${filter} /Length ${stored.length} >>\nstream\n`),
    stored,
    Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
  ]);
}

const PDF_ATTACHMENT_MODULE = path.resolve(__dirname, '../../../src/formats/facturx/pdf-attachment.ts');

function refusal(fn: () => unknown): GatewayError {
  const started = Date.now();
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(caught).toBeInstanceOf(GatewayError);
  return caught as GatewayError;
}

describe('extractFromPdf with PDFs built here', () => {
  it(
    'finds factur-x.xml in a PDF whose dictionaries sit in object streams, and detects it with container ' + 'pdf',
    async () => {
      const pdf = await hybridPdf([['factur-x.xml', ciiXml('urn:cen.eu:en16931:2017')]]);
      expect(isPdf(pdf)).toBe(true);
      const { filename, xml } = extractFromPdf(pdf);
      expect(filename).toBe('factur-x.xml');
      expect(xml.equals(ciiXml('urn:cen.eu:en16931:2017'))).toBe(true);
      expect(detectFormat(pdf)).toEqual(
        expect.objectContaining({
          id: 'facturx-en16931',
          syntax: 'CII',
          documentType: 'Invoice',
          container: 'pdf',
          attachmentFilename: 'factur-x.xml',
        }),
      );
    },
  );

  it('reads classic cross-reference PDFs too', async () => {
    const pdf = await hybridPdf([['factur-x.xml', ciiXml('urn:factur-x.eu:1p0:basicwl')]], false);
    expect(detectFormat(pdf)).toEqual(expect.objectContaining({ id: 'facturx-basicwl', container: 'pdf' }));
  });

  it('reports the XRechnung profile of a hybrid PDF and takes ZUGFeRD-invoice.xml case-insensitively', async () => {
    expect(detectFormat(await hybridPdf([['xrechnung.xml', ciiXml(XRECHNUNG_3)]]))).toEqual(
      expect.objectContaining({ id: 'facturx-xrechnung', version: '3.0', attachmentFilename: 'xrechnung.xml' }),
    );
    expect(
      extractFromPdf(await hybridPdf([['ZUGFeRD-invoice.xml', ciiXml('urn:zugferd.de:2p0:minimum')]])).filename,
    ).toBe('ZUGFeRD-invoice.xml');
  });

  it('prefers factur-x.xml over the other names', async () => {
    const pdf = await hybridPdf([
      ['zugferd-invoice.xml', ciiXml('urn:zugferd.de:2p0:basicwl')],
      ['factur-x.xml', ciiXml('urn:factur-x.eu:1p0:minimum')],
    ]);
    expect(detectFormat(pdf).id).toBe('facturx-minimum');
  });

  it('refuses a PDF without an invoice attachment, naming what it carries', async () => {
    const none = refusal(() => extractFromPdf(Buffer.alloc(0, 0)));
    expect(none.code).toBe('UNPROCESSABLE');
    const plain = await hybridPdf([]);
    expect(refusal(() => detectFormat(plain)).message).toBe(
      'PDF carries no e-invoice attachment (expected one of factur-x.xml, zugferd-invoice.xml, xrechnung.xml; no ' +
        'embedded files)',
    );
    const other = await hybridPdf([['lieferschein.pdf', Buffer.from('%PDF-1.4')]]);
    const e = refusal(() => detectFormat(other));
    expect(e.code).toBe('UNKNOWN_FORMAT');
    expect(e.message).toMatch(/embedded files: "lieferschein\.pdf"/);
  });

  it('caps the decompressed size of the attachment', async () => {
    const bomb = await hybridPdf([['factur-x.xml', Buffer.alloc(2 * 1024 * 1024, 0x20)]]);
    const e = refusal(() => extractFromPdf(bomb, { maxXmlBytes: 1024 * 1024 }));
    expect(e.code).toBe('PAYLOAD_TOO_LARGE');
    expect(e.message).toBe('PDF attachment "factur-x.xml" exceeds 1048576 bytes when decompressed');
  });

  it('caps a flate bomb under the default limit, without inflating it all', () => {
    // 64 MiB of zeros compress to about 64 KiB.
    const bomb = deflateSync(Buffer.alloc(64 * 1024 * 1024));
    const pdf = Buffer.concat([
      Buffer.from(
        '%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Names << /EmbeddedFiles << /Names [(factur-x.xml) 2 0 R] >> >> ' +
          '>>\nendobj\n',
      ),
      Buffer.from('2 0 obj\n<< /Type /Filespec /F (factur-x.xml) /UF (factur-x.xml) /EF << /F 3 0 R >> >>\nendobj\n'),
      Buffer.from(`3 0 obj\n<< /Type /EmbeddedFile /Filter /FlateDecode /Length ${bomb.length} >>\nstream\n`),
      bomb,
      Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
    ]);
    const e = refusal(() => detectFormat(pdf));
    expect(e.code).toBe('PAYLOAD_TOO_LARGE');
    expect(e.message).toMatch(
      /exceeds 6\d{6} bytes when decompressed \(the larger of 100 times its stored size of 6\d{4} /,
    );
    expect(e.details).toEqual(expect.objectContaining({ reason: 'PDF_ATTACHMENT_TOO_LARGE' }));
  });

  it('decodes ASCII85 and ASCIIHex attachments, alone and behind Flate', () => {
    const text = Buffer.from('Hello, Factur-X!\0\0\0\0 end');
    const a85 = Buffer.from('<~87cURD_*##@:OD%E\\1\nB:z+D#G$~>');
    expect(extractFromPdf(pdfWithAttachment(a85, '/ASCII85Decode')).xml.equals(text)).toBe(true);
    expect(extractFromPdf(pdfWithAttachment(deflateSync(a85), '[/FlateDecode /A85]')).xml.equals(text)).toBe(true);
    const read = (stored: string, filter: string): string =>
      extractFromPdf(pdfWithAttachment(Buffer.from(stored), filter)).xml.toString();
    expect(read('48 69203C78\n2F3E>', '/AHx')).toBe('Hi <x/>');
    expect(read('4869203C782F3>', '/AHx')).toBe('Hi <x/0');
    const bad = (stored: string, filter: string): string => refusal(() => read(stored, filter)).message;
    expect(bad('<~87c{~>', '/A85')).toBe('PDF attachment "factur-x.xml": invalid ASCII85Decode data');
    expect(bad('4G', '/AHx')).toBe('PDF attachment "factur-x.xml": invalid ASCIIHexDecode data');
  });

  it('stops each decoder at its cap as it writes: ASCII85 z runs, ASCIIHex, and chains', () => {
    const limits = { maxXmlBytes: 1024 * 1024, xmlRatioFloorBytes: 1024 * 1024 };
    // 1 MiB of 'z' would decode to 4 MiB.
    const zRun = refusal(() => extractFromPdf(pdfWithAttachment(Buffer.alloc(1024 * 1024, 'z'), '/A85'), limits));
    expect(zRun.code).toBe('PAYLOAD_TOO_LARGE');
    expect(zRun.message).toBe('PDF attachment "factur-x.xml" exceeds 1048576 bytes when decompressed');
    const hex = refusal(() => extractFromPdf(pdfWithAttachment(Buffer.alloc(3 * 1024 * 1024, '41'), '/AHx'), limits));
    expect(hex.code).toBe('PAYLOAD_TOO_LARGE');
    // Flate output that fits its stage (3 MiB of 'z' under 3 × 1 MiB), then ASCII85 output that does not.
    const zs = deflateSync(Buffer.alloc(3 * 1024 * 1024 - 1, 'z'));
    const chain = refusal(() => extractFromPdf(pdfWithAttachment(zs, '[/Fl /A85]'), limits));
    expect(chain.code).toBe('PAYLOAD_TOO_LARGE');
    const fiveFilters = pdfWithAttachment(Buffer.from('x'), '[/AHx /AHx /AHx /AHx /AHx]');
    expect(refusal(() => extractFromPdf(fiveFilters)).message).toBe(
      'PDF attachment "factur-x.xml": more than 4 stream filters',
    );
  });

  it('refuses 24 MiB of ASCII85 z behind Flate (a 25 KB PDF) within a small heap, quickly', async () => {
    // The ASCII85 decoder once collected ~96 M numbers in an array before checking its cap: V8 aborted the process.
    const zs = deflateSync(Buffer.alloc(24 * 1024 * 1024, 'z'), { level: 9 });
    const pdf = pdfWithAttachment(zs, '[/FlateDecode /ASCII85Decode]');
    expect(pdf.length).toBeLessThan(30_000);
    const outcome = await runBounded(PDF_ATTACHMENT_MODULE, 'extractFromPdf', pdf, { maxHeapMb: 96 });
    expect(outcome).toEqual(expect.objectContaining({ kind: 'threw', code: 'PAYLOAD_TOO_LARGE' }));
    expect(outcome.kind === 'threw' && outcome.details).toEqual(
      expect.objectContaining({ reason: 'PDF_ATTACHMENT_TOO_LARGE', limit: 4 * 1024 * 1024 }),
    );
    expect(outcome.kind === 'threw' && outcome.ms).toBeLessThan(5_000);
  }, 60_000);

  it('refuses an attachment that inflates more than 100 times beyond 4 MiB: 20 MB of XML in a 24 KB PDF', async () => {
    const line = '<ram:IncludedSupplyChainTradeLineItem><ram:ID>1</ram:ID></ram:IncludedSupplyChainTradeLineItem>';
    const open = `<rsm:CrossIndustryInvoice xmlns:rsm="${NS.rsm}" xmlns:ram="${NS.ram}">`;
    const invoice = (lines: number): Buffer => Buffer.from(`${open}${line.repeat(lines)}</rsm:CrossIndustryInvoice>`);
    const xml = invoice(200_000);
    expect(xml.length).toBeGreaterThan(19_000_000);
    const pdf = pdfWithAttachment(deflateSync(xml, { level: 9 }), '/FlateDecode');
    expect(pdf.length).toBeLessThan(100_000);
    const e = refusal(() => detectFormat(pdf));
    expect(e.code).toBe('PAYLOAD_TOO_LARGE');
    const stored = pdf.length - 300;
    const storedBytes = e.details?.['storedBytes'] as number;
    const limit = Math.max(4 * 1024 * 1024, 100 * storedBytes);
    expect(e.details).toEqual({ reason: 'PDF_ATTACHMENT_TOO_LARGE', limit, storedBytes });
    expect(storedBytes).toBeGreaterThan(stored - 100);
    // Under the 4 MiB floor, any ratio is accepted.
    const small = invoice(40_000);
    expect(extractFromPdf(await hybridPdf([['factur-x.xml', small]])).xml.length).toBe(small.length);
  });

  it('bounds what the object parser holds: a dictionary of a million empty dictionaries is refused', () => {
    const pdf = Buffer.from(`%PDF-1.7\n1 0 obj << /EF [${'<<>> '.repeat(1_000_000)}] >> endobj\n`);
    const e = refusal(() => extractFromPdf(pdf));
    expect(e.code).toBe('UNPROCESSABLE');
    expect(e.details).toEqual({ reason: 'PDF_TOO_MANY_VALUES' });
  });

  it('passes the embedded XML through the secure parser', async () => {
    const evil = Buffer.from('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>');
    const pdf = await hybridPdf([['factur-x.xml', evil]]);
    expect(refusal(() => detectFormat(pdf)).code).toBe('UNSAFE_XML');
  });

  it('stays linear and crash-free on hostile PDF structure', () => {
    const unterminatedStreams = Buffer.from(
      '%PDF-1.7\n' + '1 0 obj << /Length 9 0 R >> stream\nxxxxxxxx\n'.repeat(200_000),
    );
    expect(refusal(() => extractFromPdf(unterminatedStreams)).code).toBe('UNKNOWN_FORMAT');
    const deepArrays = Buffer.from(`%PDF-1.7\n1 0 obj ${'['.repeat(200_000)} endobj\n2 0 obj << /EF 1 0 R >> endobj\n`);
    expect(refusal(() => extractFromPdf(deepArrays)).code).toBe('UNKNOWN_FORMAT');
    const garbage = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(100_000, 0xab)]);
    expect(refusal(() => extractFromPdf(garbage)).message).toBe('no objects found in the PDF (damaged file?)');
    const manySpecs = Buffer.from(
      '%PDF-1.7\n' +
        Array.from(
          { length: 100_000 },
          (_, k) => `${k + 1} 0 obj << /Type /Filespec /F (a.xml) /EF << /F ${k + 2} 0 R >> >> stream\nx\n`,
        ).join(''),
    );
    const e = refusal(() => extractFromPdf(manySpecs));
    expect(e.code).toBe('UNPROCESSABLE');
    expect(e.message).toBe('PDF needs more than 10000 objects parsed to find its attachments');
  });
});

describe('extractFromPdf with the corpus PDFs', () => {
  const pdfs = readdirSync(MUSTANG)
    .filter((f) => f.endsWith('.pdf'))
    .sort();

  it.each(pdfs)('%s: same attachment as pdf-lib’s own loader', async (name) => {
    const pdf = readFileSync(path.join(MUSTANG, name));
    const expected = await viaPdfLibLoader(pdf);
    const wanted = expected.find((a) => /^(factur-x|zugferd-invoice|xrechnung)\.xml$/i.test(a.name));
    let got: { filename: string; size: number } | GatewayError;
    try {
      const r = extractFromPdf(pdf);
      got = { filename: r.filename, size: r.xml.length };
    } catch (e) {
      got = e as GatewayError;
    }
    if (wanted) expect(got).toEqual({ filename: wanted.name, size: wanted.size });
    else expect(got).toEqual(expect.objectContaining({ code: 'UNKNOWN_FORMAT' }));
  });

  it('detects a Factur-X EN 16931 PDF from the corpus with container pdf', () => {
    expect(detectFormat(readFileSync(path.join(MUSTANG, 'EN16931_Einfach.pdf')))).toEqual({
      id: 'facturx-en16931',
      name: 'Factur-X / ZUGFeRD EN 16931 (COMFORT)',
      syntax: 'CII',
      documentType: 'Invoice',
      urn: 'urn:cen.eu:en16931:2017',
      rootName: 'CrossIndustryInvoice',
      rootNamespace: NS.rsm,
      customizationId: 'urn:cen.eu:en16931:2017',
      version: '2017',
      container: 'pdf',
      attachmentFilename: 'factur-x.xml',
    });
  });

  it('never hangs or crashes on a truncated PDF', () => {
    const pdf = readFileSync(path.join(MUSTANG, 'EN16931_Einfach.pdf'));
    for (const cut of [0.25, 0.5, 0.75, 0.95]) {
      const started = Date.now();
      try {
        extractFromPdf(pdf.subarray(0, Math.floor(pdf.length * cut)));
      } catch (e) {
        expect(e).toBeInstanceOf(GatewayError);
      }
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });
});
