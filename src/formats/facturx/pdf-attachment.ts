import { constants as zlibConstants, inflateRawSync, inflateSync } from 'node:zlib';
import {
  PDFArray,
  PDFContext,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFObjectParser,
  PDFRawStream,
  PDFRef,
  PDFString,
} from 'pdf-lib';
import { GatewayError } from '../../core/gateway-error';

/**
 * Reads the embedded invoice XML out of a Factur-X / ZUGFeRD / XRechnung hybrid PDF (PDF/A-3 with an associated file).
 *
 * pdf-lib's document loader is asynchronous and inflates object streams without a size cap, so this reader drives
 * pdf-lib's synchronous object parser itself: it locates every `n g obj` in the file (the way PDF repair tools do,
 * which
 * also copes with broken cross-reference tables), parses only the objects that mention file specifications, name trees
 * or object streams (and what they reference), each within the bytes up to the next object, expands object streams
 * with a capped inflate, and collects the file specifications (`/EF`). The work stays linear in the input size and
 * every decompression is bounded.
 */

export interface PdfLimits {
  /** Maximum size of the PDF itself. */
  maxPdfBytes: number;
  /**
   * Maximum size of the embedded XML after decompression, whatever its stored size: the upload limit, so a PDF carries
   * no more XML than could be uploaded on its own.
   */
  maxXmlBytes: number;
  /**
   * Above `xmlRatioFloorBytes`, the embedded XML may be at most this many times the size it is stored with. Deflate
   * shrinks real invoice XML 5–20 times (50 for very repetitive data); a larger ratio is a decompression bomb, which
   * would turn a request of a few kilobytes into megabytes of XML to parse.
   */
  maxXmlExpansion: number;
  /** The embedded XML may always be this large, however small its stored form. */
  xmlRatioFloorBytes: number;
  /** Maximum decompressed size of one object stream, and of all of them together (×4). */
  maxObjectStreamBytes: number;
  maxObjects: number;
  /**
   * Maximum number of objects actually parsed. Only attachment-related objects are parsed (a few dozen in real files);
   * the cap stops PDFs built to make that number large.
   */
  maxParsedObjects: number;
  /**
   * Maximum number of values (numbers, names, strings, arrays, dictionaries) the parsed objects hold together. A parsed
   * dictionary costs some 250 bytes of heap for 5 bytes of PDF (`<<>> `), so this, not the file size, bounds the memory
   * the object parser takes: 100,000 values stay near 25 MB, where real attachment structures hold a few hundred.
   */
  maxParsedValues: number;
  /** Maximum decompressed size of the document's XMP metadata stream (real packets are a few kilobytes). */
  maxXmpBytes: number;
}

export const DEFAULT_PDF_LIMITS: Readonly<PdfLimits> = Object.freeze({
  maxPdfBytes: 24 * 1024 * 1024,
  maxXmlBytes: 24 * 1024 * 1024,
  maxXmlExpansion: 100,
  xmlRatioFloorBytes: 4 * 1024 * 1024,
  maxObjectStreamBytes: 16 * 1024 * 1024,
  maxObjects: 500_000,
  maxParsedObjects: 10_000,
  maxParsedValues: 100_000,
  maxXmpBytes: 1024 * 1024,
});

/** The decompressed-size cap of an attachment stored in `storedBytes` bytes (see PdfLimits). */
export function attachmentCap(
  storedBytes: number,
  limits: Pick<PdfLimits, 'maxXmlBytes' | 'maxXmlExpansion' | 'xmlRatioFloorBytes'>,
): number {
  return Math.min(limits.maxXmlBytes, Math.max(limits.xmlRatioFloorBytes, storedBytes * limits.maxXmlExpansion));
}

/**
 * Attachment names, in order of preference: Factur-X 1.0 / ZUGFeRD ≥ 2.1, ZUGFeRD 2.0 and 1.0 (`ZUGFeRD-invoice.xml`;
 * compared case-insensitively), and the XRechnung profile.
 */
export const INVOICE_ATTACHMENT_NAMES: readonly string[] = ['factur-x.xml', 'zugferd-invoice.xml', 'xrechnung.xml'];

export interface PdfAttachment {
  filename: string;
  xml: Buffer;
}

/** True when the bytes carry a PDF header (PDF readers accept it within the first 1024 bytes). */
export function isPdf(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  return head.includes('%PDF-');
}

const OBJ_HEADER = /(\d{1,10})[\0\t\n\f\r ]+(\d{1,5})[\0\t\n\f\r ]+obj(?![A-Za-z])/g;

const N = {
  Type: PDFName.of('Type'),
  ObjStm: PDFName.of('ObjStm'),
  First: PDFName.of('First'),
  N: PDFName.of('N'),
  EF: PDFName.of('EF'),
  F: PDFName.of('F'),
  UF: PDFName.of('UF'),
  Names: PDFName.of('Names'),
  Filter: PDFName.of('Filter'),
  DecodeParms: PDFName.of('DecodeParms'),
  Predictor: PDFName.of('Predictor'),
  Metadata: PDFName.of('Metadata'),
  AF: PDFName.of('AF'),
  AFRelationship: PDFName.of('AFRelationship'),
  Catalog: PDFName.of('Catalog'),
};

function unprocessable(message: string): GatewayError {
  return new GatewayError('UNPROCESSABLE', message);
}

// --- stream decoding ------------------------------------------------------------------------------------------------

function tooLarge(what: string, cap: number): GatewayError {
  return new GatewayError('PAYLOAD_TOO_LARGE', `${what} exceeds ${cap} bytes when decompressed`, {
    details: { reason: 'PDF_STREAM_TOO_LARGE', limit: cap },
  });
}

/**
 * The output of one decoding stage: it grows by doubling up to `cap` and refuses the byte that would pass it, so no
 * stage ever holds more than its cap, however much its input would expand to.
 */
class BoundedOutput {
  private buf: Buffer;
  private length = 0;

  constructor(
    private readonly cap: number,
    sizeHint: number,
    private readonly what: string,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(16, Math.min(cap, sizeHint)));
  }

  push(byte: number): void {
    if (this.length === this.buf.length) this.grow();
    this.buf[this.length++] = byte;
  }

  private grow(): void {
    if (this.length >= this.cap) throw tooLarge(this.what, this.cap);
    const next = Buffer.allocUnsafe(Math.min(this.cap, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  result(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

function isPdfWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
}

function inflateCapped(data: Uint8Array, cap: number, what: string): Buffer {
  // zlib stops as soon as the output would pass maxOutputLength: the cap bounds the work and the memory.
  const opts = { maxOutputLength: cap, finishFlush: zlibConstants.Z_SYNC_FLUSH };
  try {
    return inflateSync(data, opts);
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(what, cap);
    try {
      // Some producers write raw deflate data without the zlib header.
      return inflateRawSync(data, opts);
    } catch (e2) {
      if ((e2 as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(what, cap);
      throw unprocessable(`${what}: compressed data is corrupt (${(e as Error).message})`);
    }
  }
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function asciiHexDecode(data: Uint8Array, cap: number, what: string): Buffer {
  const out = new BoundedOutput(cap, data.length >> 1, what);
  let high = -1;
  for (const c of data) {
    if (isPdfWhitespace(c)) continue;
    if (c === 0x3e /* > */) break;
    const v = hexValue(c);
    if (v === -1) throw unprocessable(`${what}: invalid ASCIIHexDecode data`);
    if (high === -1) high = v;
    else {
      out.push((high << 4) | v);
      high = -1;
    }
  }
  if (high !== -1) out.push(high << 4);
  return out.result();
}

function ascii85Decode(data: Uint8Array, cap: number, what: string): Buffer {
  const out = new BoundedOutput(cap, data.length, what);
  const invalid = (): GatewayError => unprocessable(`${what}: invalid ASCII85Decode data`);
  let i = 0;
  while (i < data.length && isPdfWhitespace(data[i] as number)) i++;
  if (data[i] === 0x3c /* < */ && data[i + 1] === 0x7e /* ~ */) i += 2;
  let value = 0;
  let count = 0;
  const emit = (v: number, bytes: number): void => {
    for (let k = 0; k < bytes; k++) out.push((v >>> (24 - 8 * k)) & 0xff);
  };
  for (; i < data.length; i++) {
    const c = data[i] as number;
    if (isPdfWhitespace(c)) continue;
    if (c === 0x7e /* ~ */) break;
    if (c === 0x7a /* z */) {
      if (count !== 0) throw invalid();
      emit(0, 4);
      continue;
    }
    if (c < 0x21 || c > 0x75) throw invalid();
    value = value * 85 + (c - 0x21);
    if (++count === 5) {
      if (value > 0xffffffff) throw invalid();
      emit(value, 4);
      value = 0;
      count = 0;
    }
  }
  if (count === 1) throw invalid();
  if (count > 1) {
    for (let k = count; k < 5; k++) value = value * 85 + 84;
    if (value > 0xffffffff) throw invalid();
    emit(value, count - 1);
  }
  return out.result();
}

function toArray(obj: unknown, deref: (o: unknown) => unknown): unknown[] {
  const v = deref(obj);
  if (v === undefined) return [];
  return v instanceof PDFArray ? v.asArray().map(deref) : [v];
}

/** Longest filter chain accepted; real files use one filter, rarely two. */
const MAX_FILTERS = 4;

/**
 * An earlier stage of a filter chain may hold its output's encoded form: ASCIIHex doubles the size (plus line breaks),
 * so earlier stages get three times the final cap.
 */
const EARLIER_STAGE_FACTOR = 3;

/**
 * Decodes a stream through its filter chain; only lossless filters are accepted, each writing into a buffer bounded by
 * its cap, so a chain never holds more than the caps, whatever the data expands to.
 */
function decodeStream(stream: PDFRawStream, cap: number, what: string, deref: (o: unknown) => unknown): Buffer {
  const filters = toArray(stream.dict.get(N.Filter), deref);
  const parms = toArray(stream.dict.get(N.DecodeParms), deref);
  if (filters.length > MAX_FILTERS) throw unprocessable(`${what}: more than ${MAX_FILTERS} stream filters`);
  let data: Uint8Array = stream.contents;
  filters.forEach((f, k) => {
    const name = f instanceof PDFName ? f.decodeText() : String(f);
    const parm = parms[k];
    if (parm instanceof PDFDict) {
      const predictor = deref(parm.get(N.Predictor));
      if (predictor instanceof PDFNumber && predictor.asNumber() > 1)
        throw unprocessable(`${what}: predictor functions are not supported`);
    }
    const stageCap = k === filters.length - 1 ? cap : cap * EARLIER_STAGE_FACTOR;
    if (name === 'FlateDecode' || name === 'Fl') data = inflateCapped(data, stageCap, what);
    else if (name === 'ASCIIHexDecode' || name === 'AHx') data = asciiHexDecode(data, stageCap, what);
    else if (name === 'ASCII85Decode' || name === 'A85') data = ascii85Decode(data, stageCap, what);
    else throw unprocessable(`${what}: stream filter /${name} is not supported`);
  });
  if (data.length > cap) throw tooLarge(what, cap);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}

// --- object access ------------------------------------------------------------------------------------------------

function textOf(o: unknown): string | undefined {
  if (o instanceof PDFString || o instanceof PDFHexString) {
    try {
      return o.decodeText();
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Keywords that mark the objects worth parsing: file specifications, name trees and object streams. */
const INTERESTING = /\/(EF|Names|EmbeddedFiles|ObjStm|AF)(?=[\0\t\n\f\r /<>[\]()%])/g;

/** Index of the first element of the ascending `sorted` that is at least `pos` (its length when none is). */
function firstAtOrAfter(sorted: readonly number[], pos: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Header {
  num: number;
  gen: number;
  start: number;
  body: number;
  /** Where the next object header starts: objects do not nest, so no parse needs to look further. */
  limit: number;
}

interface InStream {
  data: Buffer;
  offset: number;
  end: number;
  at: number;
}

/**
 * Objects of a PDF, parsed on demand. Only objects that mention a relevant key, and what they reference, are ever
 * parsed, so the cost follows the attachment structure rather than the page content.
 */
class PdfObjects {
  readonly encrypted: boolean;
  readonly objectCount: number;
  private readonly latin: string;
  private readonly context = PDFContext.create();
  private readonly headers: Header[] = [];
  /** Latest header per "num gen" (later definitions win, as with incremental updates). */
  private readonly latest = new Map<string, number>();
  private readonly inStreams = new Map<string, InStream>();
  private readonly cache = new Map<string, unknown>();
  private readonly endstreams: number[] = [];
  private retryBudget: number;
  private expanded = 0;

  constructor(
    private readonly pdf: Buffer,
    private readonly limits: PdfLimits,
  ) {
    this.latin = pdf.toString('latin1');
    OBJ_HEADER.lastIndex = 0;
    for (let m = OBJ_HEADER.exec(this.latin); m; m = OBJ_HEADER.exec(this.latin)) {
      if (this.headers.length >= limits.maxObjects)
        throw unprocessable(`PDF has more than ${limits.maxObjects} objects`);
      const h: Header = {
        num: Number(m[1]),
        gen: Number(m[2]),
        start: m.index,
        body: m.index + m[0].length,
        limit: pdf.length,
      };
      const prev = this.headers[this.headers.length - 1];
      if (prev) prev.limit = h.start;
      this.latest.set(`${h.num} ${h.gen}`, this.headers.length);
      this.headers.push(h);
    }
    this.objectCount = this.headers.length;
    for (let k = this.latin.indexOf('endstream'); k !== -1; k = this.latin.indexOf('endstream', k + 9))
      this.endstreams.push(k);
    this.retryBudget = 2 * pdf.length;
    this.encrypted = /\/Encrypt[\0\t\n\f\r /<0-9]/.test(this.latin);
  }

  private parsed = 0;
  private values = 0;

  private parse(bytes: Uint8Array): unknown {
    if (++this.parsed > this.limits.maxParsedObjects) {
      throw new GatewayError(
        'UNPROCESSABLE',
        `PDF needs more than ${this.limits.maxParsedObjects} objects parsed to find its attachments`,
        {
          details: { reason: 'PDF_TOO_MANY_OBJECTS' },
        },
      );
    }
    const parser = PDFObjectParser.forBytes(bytes, this.context);
    // pdf-lib's parser reads every value of an object, however many, through parseObject; counting there bounds the
    // memory of what is parsed (the budget is shared by every object of the file).
    const parseObject = parser.parseObject.bind(parser);
    parser.parseObject = () => {
      if (++this.values > this.limits.maxParsedValues) {
        const message = `PDF attachment structure holds more than ${this.limits.maxParsedValues} values`;
        throw new GatewayError('UNPROCESSABLE', message, { details: { reason: 'PDF_TOO_MANY_VALUES' } });
      }
      return parseObject();
    };
    return parser.parseObject();
  }

  private parseHeader(index: number): unknown {
    const h = this.headers[index] as Header;
    try {
      return this.parse(this.pdf.subarray(h.body, h.limit));
    } catch (e) {
      if (e instanceof GatewayError) throw e;
      // Stream data that happens to contain "n g obj" cuts the first attempt short: retry up to the next endstream,
      // within a budget that keeps the total work linear.
      const slice = this.latin.slice(h.body, h.limit);
      if (!slice.includes('stream')) return undefined;
      const endstream = this.firstEndstreamAfter(h.body);
      if (endstream === -1 || endstream < h.limit) return undefined;
      const end = Math.min(this.pdf.length, endstream + 10);
      this.retryBudget -= end - h.body;
      if (this.retryBudget < 0) return undefined;
      try {
        return this.parse(this.pdf.subarray(h.body, end));
      } catch (retryError) {
        if (retryError instanceof GatewayError) throw retryError;
        return undefined;
      }
    }
  }

  private firstEndstreamAfter(pos: number): number {
    return this.endstreams[firstAtOrAfter(this.endstreams, pos)] ?? -1;
  }

  /** The object a reference points to (parsed on first use), or the value itself. */
  deref = (o: unknown): unknown => {
    if (!(o instanceof PDFRef)) return o;
    const key = `${o.objectNumber} ${o.generationNumber}`;
    if (this.cache.has(key)) return this.cache.get(key);
    this.cache.set(key, undefined); // guards against reference cycles while parsing
    const index = this.latest.get(key);
    const inStream = this.inStreams.get(key);
    let obj: unknown;
    if (inStream && (index === undefined || inStream.at > (this.headers[index] as Header).start)) {
      try {
        obj = this.parse(inStream.data.subarray(inStream.offset, inStream.end));
      } catch (e) {
        if (e instanceof GatewayError) throw e;
        obj = undefined;
      }
    } else if (index !== undefined) {
      obj = this.parseHeader(index);
    }
    this.cache.set(key, obj);
    return obj;
  };

  private refOf(h: Header): PDFRef {
    return PDFRef.of(h.num, h.gen);
  }

  /** Top-level objects whose text mentions a relevant key (latest definition of each). */
  private interestingHeaders(): Header[] {
    const found = new Set<number>();
    INTERESTING.lastIndex = 0;
    let lo = 0;
    for (let m = INTERESTING.exec(this.latin); m; m = INTERESTING.exec(this.latin)) {
      // Keyword positions grow, so the containing header index only moves forward.
      while (lo + 1 < this.headers.length && (this.headers[lo + 1] as Header).start <= m.index) lo++;
      const h = this.headers[lo];
      if (h && h.start <= m.index && m.index < h.limit && this.latest.get(`${h.num} ${h.gen}`) === lo) found.add(lo);
    }
    return [...found].map((k) => this.headers[k] as Header);
  }

  /** Expands the object streams among `candidates`; returns the objects inside them that mention a relevant key. */
  private expandObjectStreams(candidates: Header[]): PDFRef[] {
    const refs: PDFRef[] = [];
    for (const h of candidates) {
      const s = this.deref(this.refOf(h));
      if (!(s instanceof PDFRawStream) || this.deref(s.dict.get(N.Type)) !== N.ObjStm) continue;
      let data: Buffer;
      try {
        data = decodeStream(s, this.limits.maxObjectStreamBytes, 'object stream', this.deref);
      } catch (e) {
        if (e instanceof GatewayError && e.code === 'PAYLOAD_TOO_LARGE') throw e;
        continue;
      }
      this.expanded += data.length;
      if (this.expanded > this.limits.maxObjectStreamBytes * 4) {
        throw tooLarge('object streams together', this.limits.maxObjectStreamBytes * 4);
      }
      const first = this.deref(s.dict.get(N.First));
      const count = this.deref(s.dict.get(N.N));
      if (!(first instanceof PDFNumber) || !(count instanceof PDFNumber)) continue;
      const firstOffset = first.asNumber();
      if (!Number.isInteger(firstOffset) || firstOffset < 0 || firstOffset > data.length) continue;
      const n = Math.max(0, Math.min(Math.floor(count.asNumber()), this.limits.maxObjects));
      // The header is `num offset` pairs; only the first n are read, and no more tokens than that are kept.
      const header = data.subarray(0, firstOffset).toString('latin1');
      const pairs: number[] = [];
      const token = /[^\0\t\n\f\r ]+/g;
      for (let m = token.exec(header); m && pairs.length < 2 * n; m = token.exec(header)) pairs.push(Number(m[0]));
      // Where the stream mentions a relevant key, found once: each object is then checked by a binary search, so
      // offsets that make objects overlap cost nothing more.
      const text = data.toString('latin1');
      const mentions: number[] = [];
      INTERESTING.lastIndex = 0;
      for (let m = INTERESTING.exec(text); m; m = INTERESTING.exec(text)) mentions.push(m.index);
      const mentionIn = (from: number, to: number): boolean => {
        const k = firstAtOrAfter(mentions, from);
        return k < mentions.length && (mentions[k] as number) < to;
      };
      const objects = Math.floor(pairs.length / 2);
      for (let k = 0; k < objects; k++) {
        const num = pairs[2 * k] as number;
        const offset = firstOffset + (pairs[2 * k + 1] as number);
        const end = Math.min(k + 1 < objects ? firstOffset + (pairs[2 * k + 3] as number) : data.length, data.length);
        if (!Number.isInteger(num) || !Number.isInteger(offset)) continue;
        if (offset < firstOffset || offset >= data.length || !(end >= offset)) continue;
        const key = `${num} 0`;
        const existing = this.inStreams.get(key);
        if (existing && existing.at > h.start) continue;
        this.inStreams.set(key, { data, offset, end, at: h.start });
        this.cache.delete(key);
        if (mentionIn(offset, end)) refs.push(PDFRef.of(num, 0));
      }
    }
    return refs;
  }

  private found: unknown[] | undefined;

  /** Every object that may be or contain a file specification or a name tree (found once, then remembered). */
  candidates(): unknown[] {
    if (this.found) return this.found;
    const top = this.interestingHeaders();
    const inner = this.expandObjectStreams(top);
    this.found = [...top.map((h) => this.deref(this.refOf(h))), ...inner.map((r) => this.deref(r))];
    return this.found;
  }

  /**
   * The document catalog: what the last `/Root` reference of the file (the trailer or cross-reference stream of the
   * latest update) points to, else a `/Type /Catalog` dictionary among the candidates (a Factur-X catalog holds /AF
   * and /Names, so it is one). Call after `candidates()`, which makes objects inside object streams reachable.
   */
  catalog(): PDFDict | undefined {
    const isCatalog = (o: unknown): o is PDFDict => o instanceof PDFDict && this.deref(o.get(N.Type)) === N.Catalog;
    const root = /\/Root[\0\t\n\f\r ]*(\d{1,10})[\0\t\n\f\r ]+(\d{1,5})[\0\t\n\f\r ]+R(?![A-Za-z])/g;
    let last: RegExpExecArray | null = null;
    for (let m = root.exec(this.latin); m; m = root.exec(this.latin)) last = m;
    if (last) {
      const obj = this.deref(PDFRef.of(Number(last[1]), Number(last[2])));
      if (isCatalog(obj)) return obj;
    }
    return this.candidates().find(isCatalog);
  }
}

interface FileSpec {
  dict: PDFDict;
  names: Set<string>;
  stream: PDFRawStream | undefined;
}

function findFileSpecs(objects: PdfObjects): FileSpec[] {
  const deref = objects.deref;
  const specs = new Map<PDFDict, FileSpec>();
  const specOf = (d: PDFDict): FileSpec => {
    let spec = specs.get(d);
    if (!spec) {
      const ef = deref(d.get(N.EF));
      const ref = ef instanceof PDFDict ? (ef.get(N.UF) ?? ef.get(N.F)) : undefined;
      const stream = deref(ref);
      spec = { dict: d, names: new Set(), stream: stream instanceof PDFRawStream ? stream : undefined };
      for (const key of [N.UF, N.F]) {
        const name = textOf(deref(d.get(key)));
        if (name) spec.names.add(name);
      }
      specs.set(d, spec);
    }
    return spec;
  };

  for (const obj of objects.candidates()) {
    // Walk direct (nested) structures only: a file specification may sit inline in a name tree's /Names array.
    const pending: unknown[] = [obj instanceof PDFRawStream ? obj.dict : obj];
    let budget = 100_000;
    while (pending.length > 0 && budget-- > 0) {
      const o = pending.pop();
      if (o instanceof PDFDict) {
        if (o.get(N.EF) !== undefined) specOf(o);
        const names = deref(o.get(N.Names));
        if (names instanceof PDFArray) {
          // Name tree leaf: [key1 value1 key2 value2 ...]; the key is the attachment's name in the tree.
          for (let k = 0; k + 1 < names.size(); k += 2) {
            const key = textOf(deref(names.get(k)));
            const value = deref(names.get(k + 1));
            if (key && value instanceof PDFDict && value.get(N.EF) !== undefined) specOf(value).names.add(key);
          }
        }
        for (const [, v] of o.entries()) if (v instanceof PDFDict || v instanceof PDFArray) pending.push(v);
      } else if (o instanceof PDFArray) {
        for (const v of o.asArray()) if (v instanceof PDFDict || v instanceof PDFArray) pending.push(v);
      }
    }
  }
  return [...specs.values()];
}

function baseName(name: string): string {
  return (name.split(/[\\/]/).pop() ?? name).trim().toLowerCase();
}

/**
 * What the PDF layer of a hybrid invoice says about itself, for the Factur-X checks of the validator
 * (src/validation/facturx-pdf.ts): the facts are read here, judged there.
 */
export interface PdfLayer {
  /** The trailer names an /Encrypt dictionary. */
  encrypted: boolean;
  /** The document catalog was found. */
  catalog: boolean;
  /** The catalog's XMP metadata stream, decoded (at most `maxXmpBytes`); absent when there is none or it is unreadable. */
  xmp?: Buffer;
  /** Why the catalog's /Metadata entry could not be read (not a stream, unsupported filter, over the size cap). */
  xmpError?: string;
  /** The /AFRelationship name of the invoice's file specification, when it has one. */
  afRelationship?: string;
  /** The catalog's /AF array references the invoice's file specification. */
  inCatalogAf: boolean;
}

export interface HybridPdf {
  attachment: PdfAttachment;
  layer: PdfLayer;
}

function layerOf(objects: PdfObjects, spec: FileSpec, limits: PdfLimits): PdfLayer {
  const { deref } = objects;
  const catalog = objects.catalog();
  const relationship = deref(spec.dict.get(N.AFRelationship));
  const layer: PdfLayer = {
    encrypted: objects.encrypted,
    catalog: catalog !== undefined,
    inCatalogAf: false,
    ...(relationship instanceof PDFName ? { afRelationship: relationship.decodeText() } : {}),
  };
  if (!catalog) return layer;
  const af = deref(catalog.get(N.AF));
  if (af instanceof PDFArray) layer.inCatalogAf = af.asArray().some((o) => deref(o) === spec.dict);
  const metadata = catalog.get(N.Metadata);
  if (metadata === undefined) return layer;
  const stream = deref(metadata);
  if (!(stream instanceof PDFRawStream)) return { ...layer, xmpError: "the catalog's /Metadata is not a stream" };
  try {
    layer.xmp = decodeStream(stream, limits.maxXmpBytes, 'XMP metadata stream', deref);
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    layer.xmpError = e.message;
  }
  return layer;
}

/**
 * The embedded invoice XML of a hybrid PDF. Throws UNKNOWN_FORMAT when the PDF carries no such attachment,
 * PAYLOAD_TOO_LARGE when a size cap is hit, UNPROCESSABLE when the PDF or the attachment cannot be read.
 */
export function extractFromPdf(pdf: Buffer | Uint8Array, limits?: Partial<PdfLimits>): PdfAttachment {
  return readPdf(pdf, limits, false).attachment;
}

/**
 * The embedded invoice XML and the facts of the PDF layer (catalog XMP metadata, the file specification's
 * /AFRelationship, the catalog's /AF, encryption), read in one pass with the same caps and errors as `extractFromPdf`.
 */
export function readHybridPdf(pdf: Buffer | Uint8Array, limits?: Partial<PdfLimits>): HybridPdf {
  return readPdf(pdf, limits, true) as HybridPdf;
}

function readPdf(
  pdf: Buffer | Uint8Array,
  limits: Partial<PdfLimits> | undefined,
  withLayer: boolean,
): { attachment: PdfAttachment; layer?: PdfLayer } {
  const l: PdfLimits = { ...DEFAULT_PDF_LIMITS, ...(limits ?? {}) };
  const bytes = Buffer.isBuffer(pdf) ? pdf : Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  if (bytes.length > l.maxPdfBytes)
    throw new GatewayError(
      'PAYLOAD_TOO_LARGE',
      `PDF of ${bytes.length} bytes exceeds the limit of ${l.maxPdfBytes} bytes`,
    );
  if (!isPdf(bytes)) throw unprocessable('not a PDF document (no %PDF- header)');

  const objects = new PdfObjects(bytes, l);
  if (objects.objectCount === 0) throw unprocessable('no objects found in the PDF (damaged file?)');
  const specs = findFileSpecs(objects);
  const { deref, encrypted } = objects;

  for (const wanted of INVOICE_ATTACHMENT_NAMES) {
    for (const spec of specs) {
      const name = [...spec.names].find((n) => baseName(n) === wanted);
      if (name === undefined) continue;
      if (!spec.stream) throw unprocessable(`PDF attachment "${name}" has no embedded file stream`);
      const stored = spec.stream.contents.length;
      const cap = attachmentCap(stored, l);
      let xml: Buffer;
      try {
        xml = decodeStream(spec.stream, cap, `PDF attachment "${name}"`, deref);
      } catch (e) {
        if (!(e instanceof GatewayError) || e.code !== 'PAYLOAD_TOO_LARGE') throw e;
        const why =
          cap < l.maxXmlBytes
            ? ` (the larger of ${l.maxXmlExpansion} times its stored size of ${stored} bytes and ` +
              `${l.xmlRatioFloorBytes} bytes)`
            : '';
        throw new GatewayError(
          'PAYLOAD_TOO_LARGE',
          `PDF attachment "${name}" exceeds ${cap} bytes when decompressed${why}`,
          {
            details: { reason: 'PDF_ATTACHMENT_TOO_LARGE', limit: cap, storedBytes: stored },
          },
        );
      }
      const attachment = { filename: (name.split(/[\\/]/).pop() ?? name).trim(), xml };
      return withLayer ? { attachment, layer: layerOf(objects, spec, l) } : { attachment };
    }
  }

  const found = [...new Set(specs.flatMap((s) => [...s.names].map(baseName)))];
  const seen = found.length > 0 ? `embedded files: ${found.map((f) => `"${f}"`).join(', ')}` : 'no embedded files';
  throw new GatewayError(
    'UNKNOWN_FORMAT',
    `PDF carries no e-invoice attachment (expected one of ${INVOICE_ATTACHMENT_NAMES.join(', ')}; ${seen})` +
      (encrypted ? '; the PDF is encrypted, which PDF/A-3 hybrid invoices must not be' : ''),
    { details: { attachments: found } },
  );
}
