import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as fontkit from '@pdf-lib/fontkit';
import { PDFHexString, PDFString, type PDFContext, type PDFRef } from 'pdf-lib';

/**
 * A TrueType font embedded as a subset (PDF/A requires every font embedded): a Type0 font with Identity-H encoding over
 * a CIDFontType2 whose CIDs are the subset's glyph ids (CIDToGIDMap /Identity), with widths from the font program and a
 * ToUnicode map so text can be extracted. Characters are mapped one to one (no shaping, no ligatures): enough for
 * Latin, Greek and Cyrillic invoices; a character the font has no glyph for is shown as '?' (PDF/A forbids showing
 * .notdef) and reported by the caller.
 */

type Font = fontkit.Font;
type Glyph = fontkit.Glyph;

interface EncodeStream {
  end(): void;
  read(): Buffer | null;
}
interface Subset {
  includeGlyph(glyph: number | Glyph): number;
  encode(stream: EncodeStream): void;
  encodeStream(): EncodeStream;
}

let EncodeStreamClass: (new () => EncodeStream) | undefined;

/**
 * The subset font program, synchronously: fontkit's Subset.encode(stream) is synchronous and only encodeStream()
 * defers it to a later tick, so this borrows encodeStream()'s stream class (from a subset whose encode does nothing)
 * and drains the stream itself.
 */
function encodeSubset(font: Font, subset: Subset): Buffer {
  if (!EncodeStreamClass) {
    const probe = font.createSubset() as unknown as Subset;
    probe.encode = () => undefined;
    EncodeStreamClass = probe.encodeStream().constructor as new () => EncodeStream;
  }
  const stream = new EncodeStreamClass();
  subset.encode(stream);
  stream.end();
  const parts: Buffer[] = [];
  for (let chunk = stream.read(); chunk !== null; chunk = stream.read()) parts.push(chunk);
  return Buffer.concat(parts);
}

const fontCache = new Map<string, Font>();

function loadFont(file: string): Font {
  let f = fontCache.get(file);
  if (!f) {
    f = fontkit.create(readFileSync(file));
    fontCache.set(file, f);
  }
  return f;
}

export class TrueTypeSubset {
  private readonly font: Font;
  private readonly scale: number;
  private readonly subset: Subset;
  /** Subset glyph id → original glyph and the code point it shows. */
  private readonly used = new Map<number, { glyph: Glyph; codePoint: number }>();
  private readonly byCodePoint = new Map<number, number>();
  /** Characters shown as '?' because the font has no glyph for them. */
  readonly missing = new Set<string>();

  constructor(file: string) {
    this.font = loadFont(file);
    this.scale = 1000 / this.font.unitsPerEm;
    this.subset = this.font.createSubset() as unknown as Subset;
  }

  /** The character itself when the font can show it, else '?'. Control characters become spaces. */
  private printable(ch: string): string {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return ' ';
    if (this.font.hasGlyphForCodePoint(cp)) return ch;
    this.missing.add(ch);
    return '?';
  }

  /** Width of the text in points at `size`. */
  widthOf(text: string, size: number): number {
    let w = 0;
    for (const ch of text)
      w += this.font.glyphForCodePoint(this.printable(ch).codePointAt(0) as number).advanceWidth * this.scale;
    return (w * size) / 1000;
  }

  /** The text as a hex string of CIDs for Tj, adding its glyphs to the subset. */
  encode(text: string): string {
    let hex = '';
    for (const ch of text) {
      const cp = this.printable(ch).codePointAt(0) as number;
      let id = this.byCodePoint.get(cp);
      if (id === undefined) {
        const glyph = this.font.glyphForCodePoint(cp);
        id = this.subset.includeGlyph(glyph);
        this.used.set(id, { glyph, codePoint: cp });
        this.byCodePoint.set(cp, id);
      }
      hex += id.toString(16).padStart(4, '0');
    }
    return `<${hex}>`;
  }

  /** Writes the font objects (call once, after all text is encoded); returns the Type0 font's reference. */
  embed(ctx: PDFContext): PDFRef {
    const ids = [...this.used.keys()].sort((a, b) => a - b);
    // Subset tag: six capitals derived from the glyph set, so the same text gives the same bytes.
    const digest = createHash('sha256')
      .update(ids.map((i) => `${i}:${this.used.get(i)?.codePoint}`).join(','))
      .digest();
    const tag = [...digest.subarray(0, 6)].map((b) => String.fromCharCode(65 + (b % 26))).join('');
    const baseFont = `${tag}+${(this.font.postscriptName ?? 'Font').replace(/[^!-~]|[()<>[\]{}/%#]/g, '')}`;
    const program = encodeSubset(this.font, this.subset);
    const fontFile = ctx.flateStream(program, { Length1: program.length });
    const bbox = this.font.bbox;
    const s = this.scale;
    const descriptor = ctx.obj({
      Type: 'FontDescriptor',
      FontName: baseFont,
      // Symbolic: the glyphs are addressed by CID, not through a standard encoding.
      Flags: 4,
      FontBBox: [
        Math.round(bbox.minX * s),
        Math.round(bbox.minY * s),
        Math.round(bbox.maxX * s),
        Math.round(bbox.maxY * s),
      ],
      ItalicAngle: this.font.italicAngle,
      Ascent: Math.round(this.font.ascent * s),
      Descent: Math.round(this.font.descent * s),
      CapHeight: Math.round((this.font.capHeight || this.font.ascent) * s),
      StemV: 80,
      FontFile2: ctx.register(fontFile),
    });
    // W: [first [w1 w2 ...]] per run of consecutive CIDs; widths are the font program's own advance widths.
    const widths: (number | number[])[] = [];
    let run: number[] = [];
    ids.forEach((id, k) => {
      if (k === 0 || id !== (ids[k - 1] as number) + 1) {
        run = [];
        widths.push(id, run);
      }
      run.push(Math.round((this.used.get(id) as { glyph: Glyph }).glyph.advanceWidth * s * 1000) / 1000);
    });
    const cidFont = ctx.obj({
      Type: 'Font',
      Subtype: 'CIDFontType2',
      BaseFont: baseFont,
      CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: 0 },
      FontDescriptor: ctx.register(descriptor),
      W: widths,
      CIDToGIDMap: 'Identity',
    });
    const toUnicode = ctx.flateStream(this.toUnicodeCMap(ids));
    const type0 = ctx.obj({
      Type: 'Font',
      Subtype: 'Type0',
      BaseFont: baseFont,
      Encoding: 'Identity-H',
      DescendantFonts: [ctx.register(cidFont)],
      ToUnicode: ctx.register(toUnicode),
    });
    return ctx.register(type0);
  }

  private toUnicodeCMap(ids: number[]): string {
    const utf16 = (cp: number): string =>
      PDFHexString.fromText(String.fromCodePoint(cp)).asString().replace(/^FEFF/i, '');
    const lines: string[] = [];
    for (let k = 0; k < ids.length; k += 100) {
      const chunk = ids.slice(k, k + 100);
      lines.push(`${chunk.length} beginbfchar`);
      for (const id of chunk)
        lines.push(
          `<${id.toString(16).padStart(4, '0')}> <${utf16((this.used.get(id) as { codePoint: number }).codePoint)}>`,
        );
      lines.push('endbfchar');
    }
    return [
      '/CIDInit /ProcSet findresource begin',
      '12 dict begin',
      'begincmap',
      '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def',
      '/CMapName /Adobe-Identity-UCS def',
      '/CMapType 2 def',
      '1 begincodespacerange',
      '<0000> <FFFF>',
      'endcodespacerange',
      ...lines,
      'endcmap',
      'CMapName currentdict /CMap defineresource pop',
      'end',
      'end',
    ].join('\n');
  }
}
