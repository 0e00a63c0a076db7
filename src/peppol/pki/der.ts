/**
 * The small part of ASN.1 BER/DER that PKCS#12 needs: reading TLVs (definite and indefinite lengths, constructed
 * OCTET STRINGs) and writing DER. Everything is bounded by the input; malformed input throws DerError.
 */

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

export const TAG = {
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

export interface Tlv {
  /** The identifier octet (class, constructed bit and tag number < 31). */
  tag: number;
  constructed: boolean;
  /** Content octets (for indefinite lengths: without the end-of-contents marker). */
  value: Buffer;
  /** The whole encoding, header included. */
  raw: Buffer;
}

const MAX_DEPTH = 64;

function readOne(buf: Buffer, offset: number, depth: number): { tlv: Tlv; next: number } {
  if (depth > MAX_DEPTH) throw new DerError('ASN.1 nesting too deep');
  if (offset + 2 > buf.length) throw new DerError('truncated ASN.1 header');
  const tag = buf[offset] as number;
  if ((tag & 0x1f) === 0x1f) throw new DerError('high tag numbers are not supported');
  const constructed = (tag & 0x20) !== 0;
  let pos = offset + 1;
  const first = buf[pos++] as number;
  if (first === 0x80) {
    if (!constructed) throw new DerError('indefinite length on a primitive value');
    const start = pos;
    for (;;) {
      if (pos + 2 > buf.length) throw new DerError('unterminated indefinite-length value');
      if (buf[pos] === 0 && buf[pos + 1] === 0) break;
      pos = readOne(buf, pos, depth + 1).next;
    }
    return {
      tlv: { tag, constructed, value: buf.subarray(start, pos), raw: buf.subarray(offset, pos + 2) },
      next: pos + 2,
    };
  }
  let length: number;
  if (first < 0x80) length = first;
  else {
    const n = first & 0x7f;
    if (n > 4) throw new DerError('ASN.1 length too large');
    if (pos + n > buf.length) throw new DerError('truncated ASN.1 length');
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + (buf[pos++] as number);
  }
  if (pos + length > buf.length) throw new DerError('ASN.1 value runs past the end of its container');
  return {
    tlv: { tag, constructed, value: buf.subarray(pos, pos + length), raw: buf.subarray(offset, pos + length) },
    next: pos + length,
  };
}

/** Reads the single TLV that makes up `buf` (trailing bytes are an error). */
export function parseDer(buf: Buffer): Tlv {
  const { tlv, next } = readOne(buf, 0, 0);
  if (next !== buf.length) throw new DerError(`${buf.length - next} unexpected bytes after the ASN.1 value`);
  return tlv;
}

/** The children of a constructed value. */
export function childrenOf(tlv: Tlv): Tlv[] {
  if (!tlv.constructed) throw new DerError(`expected a constructed value, found tag 0x${tlv.tag.toString(16)}`);
  const out: Tlv[] = [];
  let pos = 0;
  while (pos < tlv.value.length) {
    const { tlv: child, next } = readOne(tlv.value, pos, 1);
    out.push(child);
    pos = next;
  }
  return out;
}

export function expectTag(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (!tlv) throw new DerError(`${what} is missing`);
  if (tlv.tag !== tag)
    throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, found 0x${tlv.tag.toString(16)}`);
  return tlv;
}

export function sequence(tlv: Tlv | undefined, what: string): Tlv[] {
  return childrenOf(expectTag(tlv, TAG.SEQUENCE, what));
}

/** Content of an `[n] EXPLICIT` wrapper. */
export function explicit(tlv: Tlv | undefined, n: number, what: string): Tlv {
  const t = expectTag(tlv, 0xa0 | n, what);
  const kids = childrenOf(t);
  if (kids.length !== 1) throw new DerError(`${what}: expected one value inside [${n}]`);
  return kids[0] as Tlv;
}

export function readOid(tlv: Tlv | undefined, what: string): string {
  const v = expectTag(tlv, TAG.OID, what).value;
  if (v.length === 0) throw new DerError(`${what}: empty OID`);
  const parts: number[] = [];
  let acc = 0;
  for (const b of v) {
    acc = acc * 128 + (b & 0x7f);
    if (acc > Number.MAX_SAFE_INTEGER) throw new DerError(`${what}: OID arc too large`);
    if ((b & 0x80) === 0) {
      if (parts.length === 0) {
        const first = acc < 80 ? Math.floor(acc / 40) : 2;
        parts.push(first, acc - first * 40);
      } else parts.push(acc);
      acc = 0;
    }
  }
  return parts.join('.');
}

/** A non-negative INTEGER that fits a JavaScript number. */
export function readSmallInt(tlv: Tlv | undefined, what: string): number {
  const v = expectTag(tlv, TAG.INTEGER, what).value;
  if (v.length === 0 || v.length > 6 || ((v[0] as number) & 0x80) !== 0)
    throw new DerError(`${what}: unsupported INTEGER`);
  let n = 0;
  for (const b of v) n = n * 256 + b;
  return n;
}

/** OCTET STRING content; constructed (BER) strings are concatenated. `tag` allows IMPLICIT tagging. */
export function readOctets(tlv: Tlv | undefined, what: string, tag: number = TAG.OCTET_STRING): Buffer {
  if (!tlv) throw new DerError(`${what} is missing`);
  if (tlv.tag === tag) return Buffer.from(tlv.value);
  if (tlv.tag === (tag | 0x20)) return Buffer.concat(childrenOf(tlv).map((c) => readOctets(c, what, TAG.OCTET_STRING)));
  throw new DerError(`${what}: expected an OCTET STRING, found tag 0x${tlv.tag.toString(16)}`);
}

export function readBmpString(tlv: Tlv | undefined, what: string): string {
  const v = expectTag(tlv, TAG.BMP_STRING, what).value;
  if (v.length % 2 !== 0) throw new DerError(`${what}: odd BMPString length`);
  const swapped = Buffer.from(v);
  swapped.swap16();
  return swapped.toString('utf16le');
}

// ---------------------------------------------------------------------------------------------------------------------
// Writing (DER)

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), lengthBytes(body.length), body]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(TAG.SEQUENCE, ...items);
/** SET OF with its elements in DER order (sorted by encoding). */
export const setOf = (...items: Buffer[]): Buffer => tlv(TAG.SET, ...[...items].sort((a, b) => Buffer.compare(a, b)));
export const octets = (b: Buffer): Buffer => tlv(TAG.OCTET_STRING, b);
export const nul = (): Buffer => Buffer.from([TAG.NULL, 0]);
export const ctx = (n: number, ...content: Buffer[]): Buffer => tlv(0xa0 | n, ...content);

export function int(n: number): Buffer {
  if (!Number.isSafeInteger(n) || n < 0) throw new DerError('only non-negative safe integers are supported');
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  if (bytes.length === 0 || ((bytes[0] as number) & 0x80) !== 0) bytes.unshift(0);
  return tlv(TAG.INTEGER, Buffer.from(bytes));
}

export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a) || a < 0))
    throw new DerError(`invalid OID ${dotted}`);
  const out: number[] = [];
  const push = (v: number): void => {
    const chunk: number[] = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift((x & 0x7f) | 0x80);
    out.push(...chunk);
  };
  push((arcs[0] as number) * 40 + (arcs[1] as number));
  for (const a of arcs.slice(2)) push(a);
  return tlv(TAG.OID, Buffer.from(out));
}

export function bmpString(s: string): Buffer {
  const b = Buffer.from(s, 'utf16le');
  b.swap16();
  return tlv(TAG.BMP_STRING, b);
}
