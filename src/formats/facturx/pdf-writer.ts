import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { PDFContext, PDFHexString, PDFName, PDFString, type PDFRef } from 'pdf-lib';
import { escapeXml } from '../xml/helpers';
import { srgbIccProfile } from './icc';
import { TrueTypeSubset } from './truetype';

/**
 * Writes a hybrid invoice PDF: a PDF/A-3B document (ISO 19005-3) whose pages show the invoice and which carries the
 * structured invoice as an associated file, as Factur-X 1.0 / ZUGFeRD 2.x specify (embedded file `factur-x.xml` or
 * `xrechnung.xml`, `/AFRelationship`, the catalog's `/AF`, XMP with the PDF/A identification and the Factur-X
 * extension schema).
 *
 * Built directly on pdf-lib's object model and serialised synchronously here (pdf-lib's document API is asynchronous
 * and writes neither a document ID nor PDF/A metadata): every object and byte is ours to decide, so the output is
 * deterministic for a given input and date, which the tests rely on.
 *
 * PDF/A-3B requirements met here: fonts embedded (TrueType subsets), an OutputIntent with an sRGB ICC profile, all
 * colours in DeviceRGB, XMP metadata (unfiltered) matching the Info dictionary, a document ID in the trailer, no
 * encryption, the binary comment after the header, embedded files with /Subtype, /Params (ModDate, Size) and
 * /AFRelationship, listed in /AF.
 */

const requireFromHere = createRequire(__filename);
const FONT_REGULAR = requireFromHere.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
const FONT_BOLD = requireFromHere.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf');

export const PAGE_WIDTH = 595.28;
export const PAGE_HEIGHT = 841.89;

export type Rgb = readonly [number, number, number];

const num = (n: number): string => (Math.round(n * 100) / 100).toString();
const rgb = (c: Rgb): string => c.map((v) => num(v)).join(' ');

/** One page's content stream, written through a few drawing operations. */
export class PdfPage {
  readonly ops: string[] = [];

  constructor(private readonly doc: PdfCanvas) {}

  text(x: number, y: number, text: string, opts: { size?: number; bold?: boolean; color?: Rgb } = {}): void {
    if (text === '') return;
    const font = opts.bold ? this.doc.bold : this.doc.regular;
    this.ops.push(
      `BT /${opts.bold ? 'F2' : 'F1'} ${num(opts.size ?? 9)} Tf ${rgb(opts.color ?? [0, 0, 0])} rg ${num(x)} ` +
        `${num(y)} Td ${font.encode(text)} Tj ET`,
    );
  }

  line(x1: number, y1: number, x2: number, y2: number, width = 0.5, color: Rgb = [0.6, 0.6, 0.6]): void {
    this.ops.push(`${num(width)} w ${rgb(color)} RG ${num(x1)} ${num(y1)} m ${num(x2)} ${num(y2)} l S`);
  }

  fillRect(x: number, y: number, w: number, h: number, color: Rgb): void {
    this.ops.push(`${rgb(color)} rg ${num(x)} ${num(y)} ${num(w)} ${num(h)} re f`);
  }
}

/** The pages being drawn and the two fonts they use (DejaVu Sans, regular and bold). */
export class PdfCanvas {
  readonly regular = new TrueTypeSubset(FONT_REGULAR);
  readonly bold = new TrueTypeSubset(FONT_BOLD);
  readonly pages: PdfPage[] = [];

  addPage(): PdfPage {
    const p = new PdfPage(this);
    this.pages.push(p);
    return p;
  }

  widthOf(text: string, size: number, bold = false): number {
    return (bold ? this.bold : this.regular).widthOf(text, size);
  }

  /** Characters no font could show (drawn as '?'). */
  missingCharacters(): string[] {
    return [...new Set([...this.regular.missing, ...this.bold.missing])].sort();
  }
}

export type AfRelationship = 'Alternative' | 'Data' | 'Source' | 'Supplement' | 'Unspecified';

export interface HybridAttachment {
  /** The embedded file's name: `factur-x.xml` or `xrechnung.xml`. */
  filename: string;
  bytes: Buffer;
  relationship: AfRelationship;
  description: string;
  /** XMP fx:ConformanceLevel, e.g. `EN 16931`. */
  conformanceLevel: string;
  /** XMP fx:Version (`1.0` for Factur-X 1.0 / ZUGFeRD 2.x). */
  version: string;
}

export interface DocumentInfo {
  title: string;
  author: string;
  subject: string;
  keywords?: string;
  creator: string;
  producer: string;
  /** Creation and modification date (the document is written once). */
  date: Date;
}

const FX_NAMESPACE = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';

const pdfDate = (d: Date): string => `D:${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}+00'00'`;
const xmpDate = (d: Date): string => `${d.toISOString().slice(0, 19)}+00:00`;
const xmlText = escapeXml;

/** A PDF text string: literal when ASCII, UTF-16BE otherwise (PDF 1.7 §7.9.2.2). */
function textString(s: string): PDFString | PDFHexString {
  return /^[\x20-\x7e]*$/.test(s) ? PDFString.of(s.replace(/([()\\])/g, '\\$1')) : PDFHexString.fromText(s);
}

function xmpPacket(info: DocumentInfo, a: HybridAttachment): string {
  const property = (name: string, description: string): string =>
    `<rdf:li rdf:parseType="Resource"><pdfaProperty:name>${name}</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType>` +
    `<pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>${description}</pdfaProperty:description></rdf:li>`;
  return [
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>',
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">',
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">',
    '<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">',
    '<pdfaid:part>3</pdfaid:part>',
    '<pdfaid:conformance>B</pdfaid:conformance>',
    '</rdf:Description>',
    '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">',
    '<dc:format>application/pdf</dc:format>',
    `<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${xmlText(info.title)}</rdf:li></rdf:Alt></dc:title>`,
    `<dc:creator><rdf:Seq><rdf:li>${xmlText(info.author)}</rdf:li></rdf:Seq></dc:creator>`,
    `<dc:description><rdf:Alt><rdf:li ` +
      `xml:lang="x-default">${xmlText(info.subject)}</rdf:li></rdf:Alt></dc:description>`,
    '</rdf:Description>',
    '<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">',
    `<xmp:CreatorTool>${xmlText(info.creator)}</xmp:CreatorTool>`,
    `<xmp:CreateDate>${xmpDate(info.date)}</xmp:CreateDate>`,
    `<xmp:ModifyDate>${xmpDate(info.date)}</xmp:ModifyDate>`,
    `<xmp:MetadataDate>${xmpDate(info.date)}</xmp:MetadataDate>`,
    '</rdf:Description>',
    '<rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">',
    `<pdf:Producer>${xmlText(info.producer)}</pdf:Producer>`,
    ...(info.keywords !== undefined ? [`<pdf:Keywords>${xmlText(info.keywords)}</pdf:Keywords>`] : []),
    '</rdf:Description>',
    // PDF/A allows properties outside the predefined schemas only with a description of their schema (6.6.2.3.1).
    '<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" ' +
      'xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" ' +
      'xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">',
    '<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">',
    '<pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>',
    `<pdfaSchema:namespaceURI>${FX_NAMESPACE}</pdfaSchema:namespaceURI>`,
    '<pdfaSchema:prefix>fx</pdfaSchema:prefix>',
    '<pdfaSchema:property><rdf:Seq>',
    property('DocumentFileName', 'name of the embedded XML invoice file'),
    property('DocumentType', 'INVOICE'),
    property('Version', 'The actual version of the Factur-X XML schema'),
    property('ConformanceLevel', 'The conformance level of the embedded Factur-X data'),
    '</rdf:Seq></pdfaSchema:property>',
    '</rdf:li></rdf:Bag></pdfaExtension:schemas>',
    '</rdf:Description>',
    `<rdf:Description rdf:about="" xmlns:fx="${FX_NAMESPACE}">`,
    '<fx:DocumentType>INVOICE</fx:DocumentType>',
    `<fx:DocumentFileName>${xmlText(a.filename)}</fx:DocumentFileName>`,
    `<fx:Version>${xmlText(a.version)}</fx:Version>`,
    `<fx:ConformanceLevel>${xmlText(a.conformanceLevel)}</fx:ConformanceLevel>`,
    '</rdf:Description>',
    '</rdf:RDF>',
    '</x:xmpmeta>',
    '<?xpacket end="w"?>',
  ].join('\n');
}

/** Serialises the context: header with binary comment, objects, a classic cross-reference table, trailer with /ID. */
function serialize(ctx: PDFContext, root: PDFRef, info: PDFRef, id: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]?.length ?? 0;
  const offsets = new Map<number, number>();
  for (const [ref, obj] of ctx.enumerateIndirectObjects()) {
    offsets.set(ref.objectNumber, offset);
    const head = Buffer.from(`${ref.objectNumber} ${ref.generationNumber} obj\n`, 'latin1');
    const body = new Uint8Array(obj.sizeInBytes());
    obj.copyBytesInto(body, 0);
    const tail = Buffer.from('\nendobj\n', 'latin1');
    parts.push(head, Buffer.from(body), tail);
    offset += head.length + body.length + tail.length;
  }
  const size = ctx.largestObjectNumber + 1;
  const xref = ['xref', `0 ${size}`, '0000000000 65535 f '];
  for (let n = 1; n < size; n++) {
    const at = offsets.get(n);
    xref.push(at === undefined ? '0000000000 65535 f ' : `${String(at).padStart(10, '0')} 00000 n `);
  }
  const hex = id.toString('hex').toUpperCase();
  parts.push(
    Buffer.from(
      `${xref.join('\n')}\ntrailer\n<< /Size ${size} /Root ${root.toString()} /Info ${info.toString()} /ID ` +
        `[<${hex}> <${hex}>] >>\nstartxref\n${offset}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(parts);
}

/** The finished PDF/A-3B with the attachment. */
export function writeHybridPdf(canvas: PdfCanvas, attachment: HybridAttachment, info: DocumentInfo): Buffer {
  if (canvas.pages.length === 0) throw new Error('a PDF needs at least one page');
  const ctx = PDFContext.create();
  const fonts = ctx.obj({ F1: canvas.regular.embed(ctx), F2: canvas.bold.embed(ctx) });
  const pagesRef = ctx.nextRef();
  const kids = canvas.pages.map((p) => {
    const contents = ctx.register(ctx.flateStream(p.ops.join('\n')));
    return ctx.register(
      ctx.obj({
        Type: 'Page',
        Parent: pagesRef,
        MediaBox: [0, 0, PAGE_WIDTH, PAGE_HEIGHT],
        Resources: { Font: fonts },
        Contents: contents,
      }),
    );
  });
  ctx.assign(pagesRef, ctx.obj({ Type: 'Pages', Kids: kids, Count: kids.length }));

  const icc = ctx.flateStream(srgbIccProfile(), { N: 3 });
  const outputIntent = ctx.obj({
    Type: 'OutputIntent',
    S: 'GTS_PDFA1',
    OutputConditionIdentifier: PDFString.of('sRGB IEC61966-2.1'),
    RegistryName: PDFString.of('http://www.color.org'),
    Info: PDFString.of('sRGB IEC61966-2.1'),
    DestOutputProfile: ctx.register(icc),
  });

  const date = PDFString.of(pdfDate(info.date));
  const file = ctx.flateStream(attachment.bytes, {
    Type: 'EmbeddedFile',
    // The MIME type as a name: text/xml with the slash written #2F (PDF 1.7 §7.11.4).
    Subtype: PDFName.of('text/xml'),
    Params: { ModDate: date, CreationDate: date, Size: attachment.bytes.length },
  });
  const fileRef = ctx.register(file);
  const filespec = ctx.register(
    ctx.obj({
      Type: 'Filespec',
      F: PDFString.of(attachment.filename),
      UF: textString(attachment.filename),
      Desc: textString(attachment.description),
      AFRelationship: attachment.relationship,
      EF: { F: fileRef, UF: fileRef },
    }),
  );

  const xmp = ctx.stream(Buffer.from(xmpPacket(info, attachment), 'utf8'), { Type: 'Metadata', Subtype: 'XML' });
  const catalog = ctx.obj({
    Type: 'Catalog',
    Pages: pagesRef,
    Metadata: ctx.register(xmp),
    OutputIntents: [outputIntent],
    AF: ctx.obj([filespec]),
    Names: { EmbeddedFiles: { Names: [textString(attachment.filename), filespec] } },
    // Opens with the attachments pane, where readers list the XML.
    PageMode: 'UseAttachments',
  });
  const root = ctx.register(catalog);
  const infoRef = ctx.register(
    ctx.obj({
      Title: textString(info.title),
      Author: textString(info.author),
      Subject: textString(info.subject),
      ...(info.keywords !== undefined ? { Keywords: textString(info.keywords) } : {}),
      Creator: textString(info.creator),
      Producer: textString(info.producer),
      CreationDate: date,
      ModDate: date,
    }),
  );
  // File identifier: a digest of what makes this document (PDF 1.7 §14.4), so the same input gives the same file.
  const id = createHash('md5')
    .update(attachment.bytes)
    .update(info.date.toISOString())
    .update(canvas.pages.map((p) => p.ops.join('\n')).join('\f'))
    .digest();
  return serialize(ctx, root, infoRef, id);
}
