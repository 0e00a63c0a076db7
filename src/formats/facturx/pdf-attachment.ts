import { constants as zlibConstants, inflateRawSync, inflateSync } from 'node:zlib';
import { PDFArray, PDFContext, PDFDict, PDFHexString, PDFName, PDFNumber, PDFObjectParser, PDFRawStream, PDFRef, PDFString } from 'pdf-lib';
import { GatewayError } from '../../core/gateway-error';

/**
 * Reads the embedded invoice XML out of a Factur-X / ZUGFeRD / XRechnung hybrid PDF (PDF/A-3 with an associated file).
 *
 * pdf-lib's document loader is asynchronous and inflates object streams without a size cap, so this reader drives
 * pdf-lib's synchronous object parser itself: it locates every `n g obj` in the file (the way PDF repair tools do, which
 * also copes with broken cross-reference tables), parses each within the bytes up to the next object, expands object
 * streams with a capped inflate, and looks for file specifications (`/EF`). All work is linear in the input size and
 * every decompression is bounded.
 */

export interface PdfLimits {
  /** Maximum size of the PDF itself. */
  maxPdfBytes: number;
  /** Maximum size of the embedded XML after decompression. */
  maxXmlBytes: number;
  /** Maximum decompressed size of one object stream, and of all of them together (×4). */
  maxObjectStreamBytes: number;
  maxObjects: number;
}

export const DEFAULT_PDF_LIMITS: Readonly<PdfLimits> = Object.freeze({
  maxPdfBytes: 24 * 1024 * 1024,
  maxXmlBytes: 24 * 1024 * 1024,
  maxObjectStreamBytes: 16 * 1024 * 1024,
  maxObjects: 500_000,
});

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

interface Located {
  obj: unknown;
  /** File position of the object (or of its object stream): a later definition wins, as with incremental updates. */
  at: number;
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
};

function unprocessable(message: string): GatewayError {
  return new GatewayError('UNPROCESSABLE', message);
}

function parserOffset(parser: PDFObjectParser): number {
  // BaseParser keeps its ByteStream protected; the position is needed to skip past stream data.
  return (parser as unknown as { bytes: { offset(): number } }).bytes.offset();
}

// --- stream decoding ------------------------------------------------------------------------------------------------

function inflateCapped(data: Uint8Array, cap: number, what: string): Buffer {
  const opts = { maxOutputLength: cap, finishFlush: zlibConstants.Z_SYNC_FLUSH };
  try {
    return inflateSync(data, opts);
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new GatewayError('PAYLOAD_TOO_LARGE', `${what} exceeds ${cap} bytes when decompressed`);
    }
    try {
      // Some producers write raw deflate data without the zlib header.
      return inflateRawSync(data, opts);
    } catch (e2) {
      if ((e2 as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new GatewayError('PAYLOAD_TOO_LARGE', `${what} exceeds ${cap} bytes when decompressed`);
      }
      throw unprocessable(`${what}: compressed data is corrupt (${(e as Error).message})`);
    }
  }
}

function asciiHexDecode(data: Uint8Array): Buffer {
  const hex = Buffer.from(data).toString('latin1').replace(/[\0\t\n\f\r ]/g, '');
  const end = hex.indexOf('>');
  const body = end === -1 ? hex : hex.slice(0, end);
  if (/[^0-9A-Fa-f]/.test(body)) throw unprocessable('invalid ASCIIHexDecode data');
  return Buffer.from(body.length % 2 ? `${body}0` : body, 'hex');
}

function ascii85Decode(data: Uint8Array): Buffer {
  const text = Buffer.from(data).toString('latin1').replace(/[\0\t\n\f\r ]/g, '');
  const end = text.indexOf('~>');
  const body = (end === -1 ? text : text.slice(0, end)).replace(/^<~/, '');
  const out: number[] = [];
  let group: number[] = [];
  const flush = (count: number): void => {
    let v = 0;
    for (let k = 0; k < 5; k++) v = v * 85 + (group[k] ?? 84);
    const bytes = [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
    out.push(...bytes.slice(0, count));
    group = [];
  };
  for (const ch of body) {
    if (ch === 'z' && group.length === 0) {
      out.push(0, 0, 0, 0);
      continue;
    }
    const d = ch.charCodeAt(0) - 33;
    if (d < 0 || d > 84) throw unprocessable('invalid ASCII85Decode data');
    group.push(d);
    if (group.length === 5) flush(4);
  }
  if (group.length === 1) throw unprocessable('invalid ASCII85Decode data');
  if (group.length > 0) flush(group.length - 1);
  return Buffer.from(out);
}

function toArray(obj: unknown, deref: (o: unknown) => unknown): unknown[] {
  const v = deref(obj);
  if (v === undefined) return [];
  return v instanceof PDFArray ? v.asArray().map(deref) : [v];
}

/** Decodes a stream through its filter chain; only lossless, size-bounded filters are accepted. */
function decodeStream(stream: PDFRawStream, cap: number, what: string, deref: (o: unknown) => unknown): Buffer {
  const filters = toArray(stream.dict.get(N.Filter), deref);
  const parms = toArray(stream.dict.get(N.DecodeParms), deref);
  let data: Buffer = Buffer.from(stream.contents);
  filters.forEach((f, k) => {
    const name = f instanceof PDFName ? f.decodeText() : String(f);
    const parm = parms[k];
    if (parm instanceof PDFDict) {
      const predictor = deref(parm.get(N.Predictor));
      if (predictor instanceof PDFNumber && predictor.asNumber() > 1) throw unprocessable(`${what}: predictor functions are not supported`);
    }
    if (name === 'FlateDecode' || name === 'Fl') data = inflateCapped(data, cap, what);
    else if (name === 'ASCIIHexDecode' || name === 'AHx') data = asciiHexDecode(data);
    else if (name === 'ASCII85Decode' || name === 'A85') data = ascii85Decode(data);
    else throw unprocessable(`${what}: stream filter /${name} is not supported`);
  });
  if (data.length > cap) throw new GatewayError('PAYLOAD_TOO_LARGE', `${what} exceeds ${cap} bytes`);
  return data;
}

// --- object collection --------------------------------------------------------------------------------------------

function collectObjects(pdf: Buffer, limits: PdfLimits): { objects: Map<string, Located>; encrypted: boolean } {
  const latin = pdf.toString('latin1');
  const context = PDFContext.create();
  const objects = new Map<string, Located>();

  const headers: Array<{ num: number; gen: number; start: number; body: number }> = [];
  OBJ_HEADER.lastIndex = 0;
  for (let m = OBJ_HEADER.exec(latin); m; m = OBJ_HEADER.exec(latin)) {
    headers.push({ num: Number(m[1]), gen: Number(m[2]), start: m.index, body: m.index + m[0].length });
    if (headers.length > limits.maxObjects) throw unprocessable(`PDF has more than ${limits.maxObjects} objects`);
  }

  const parseIn = (bytes: Uint8Array): { obj: unknown; end: number } => {
    const parser = PDFObjectParser.forBytes(bytes, context);
    const obj = parser.parseObject();
    return { obj, end: parserOffset(parser) };
  };

  let resumeAt = 0;
  headers.forEach((h, k) => {
    if (h.start < resumeAt) return; // inside the data of a stream parsed before
    // Objects do not nest: bounding each parse by the next header keeps pdf-lib's end-of-stream search linear overall.
    const limit = headers[k + 1]?.start ?? pdf.length;
    try {
      const { obj, end } = parseIn(pdf.subarray(h.body, limit));
      objects.set(`${h.num} ${h.gen}`, { obj, at: h.start });
      if (obj instanceof PDFRawStream) resumeAt = h.body + end;
    } catch {
      // Damaged or not really an object (for example a match inside binary data): skip it.
    }
  });

  const deref = (o: unknown): unknown => (o instanceof PDFRef ? objects.get(`${o.objectNumber} ${o.generationNumber}`)?.obj : o);

  // Object streams (PDF 1.5+) hold most dictionaries of modern files, file specifications included.
  let expanded = 0;
  for (const [, located] of [...objects]) {
    const s = located.obj;
    if (!(s instanceof PDFRawStream) || deref(s.dict.get(N.Type)) !== N.ObjStm) continue;
    let data: Buffer;
    try {
      data = decodeStream(s, limits.maxObjectStreamBytes, 'object stream', deref);
    } catch (e) {
      if (e instanceof GatewayError && e.code === 'PAYLOAD_TOO_LARGE') throw e;
      continue;
    }
    expanded += data.length;
    if (expanded > limits.maxObjectStreamBytes * 4) {
      throw new GatewayError('PAYLOAD_TOO_LARGE', `object streams exceed ${limits.maxObjectStreamBytes * 4} bytes when decompressed`);
    }
    const first = deref(s.dict.get(N.First));
    const count = deref(s.dict.get(N.N));
    if (!(first instanceof PDFNumber) || !(count instanceof PDFNumber)) continue;
    const firstOffset = first.asNumber();
    const pairs = data.subarray(0, firstOffset).toString('latin1').trim().split(/[\0\t\n\f\r ]+/).map(Number);
    const n = Math.min(count.asNumber(), Math.floor(pairs.length / 2), limits.maxObjects);
    for (let k = 0; k < n; k++) {
      const num = pairs[2 * k] as number;
      const off = firstOffset + (pairs[2 * k + 1] as number);
      const next = k + 1 < n ? firstOffset + (pairs[2 * k + 3] as number) : data.length;
      if (!Number.isFinite(num) || !Number.isFinite(off) || off < firstOffset || off >= data.length) continue;
      const key = `${num} 0`;
      const existing = objects.get(key);
      if (existing && existing.at > located.at) continue;
      try {
        const { obj } = parseIn(data.subarray(off, Math.max(off, Math.min(next, data.length))));
        objects.set(key, { obj, at: located.at });
      } catch {
        // skip damaged entries
      }
    }
  }

  const encrypted = /\/Encrypt[\0\t\n\f\r /<0-9]/.test(latin);
  return { objects, encrypted };
}

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

interface FileSpec {
  names: Set<string>;
  stream: PDFRawStream | undefined;
}

function findFileSpecs(objects: Map<string, Located>): FileSpec[] {
  const deref = (o: unknown): unknown => (o instanceof PDFRef ? objects.get(`${o.objectNumber} ${o.generationNumber}`)?.obj : o);
  const specs = new Map<PDFDict, FileSpec>();
  const specOf = (d: PDFDict): FileSpec => {
    let spec = specs.get(d);
    if (!spec) {
      const ef = deref(d.get(N.EF));
      const ref = ef instanceof PDFDict ? (ef.get(N.UF) ?? ef.get(N.F)) : undefined;
      const stream = deref(ref);
      spec = { names: new Set(), stream: stream instanceof PDFRawStream ? stream : undefined };
      for (const key of [N.UF, N.F]) {
        const name = textOf(deref(d.get(key)));
        if (name) spec.names.add(name);
      }
      specs.set(d, spec);
    }
    return spec;
  };

  for (const { obj } of objects.values()) {
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
 * The embedded invoice XML of a hybrid PDF. Throws UNKNOWN_FORMAT when the PDF carries no such attachment,
 * PAYLOAD_TOO_LARGE when a size cap is hit, UNPROCESSABLE when the PDF or the attachment cannot be read.
 */
export function extractFromPdf(pdf: Buffer | Uint8Array, limits?: Partial<PdfLimits>): PdfAttachment {
  const l: PdfLimits = { ...DEFAULT_PDF_LIMITS, ...(limits ?? {}) };
  const bytes = Buffer.isBuffer(pdf) ? pdf : Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  if (bytes.length > l.maxPdfBytes) throw new GatewayError('PAYLOAD_TOO_LARGE', `PDF of ${bytes.length} bytes exceeds the limit of ${l.maxPdfBytes} bytes`);
  if (!isPdf(bytes)) throw unprocessable('not a PDF document (no %PDF- header)');

  const { objects, encrypted } = collectObjects(bytes, l);
  if (objects.size === 0) throw unprocessable('no readable objects in the PDF (damaged file?)');
  const specs = findFileSpecs(objects);
  const deref = (o: unknown): unknown => (o instanceof PDFRef ? objects.get(`${o.objectNumber} ${o.generationNumber}`)?.obj : o);

  for (const wanted of INVOICE_ATTACHMENT_NAMES) {
    for (const spec of specs) {
      const name = [...spec.names].find((n) => baseName(n) === wanted);
      if (name === undefined) continue;
      if (!spec.stream) throw unprocessable(`PDF attachment "${name}" has no embedded file stream`);
      const xml = decodeStream(spec.stream, l.maxXmlBytes, `PDF attachment "${name}"`, deref);
      return { filename: (name.split(/[\\/]/).pop() ?? name).trim(), xml };
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
