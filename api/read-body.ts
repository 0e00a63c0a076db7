import type { Request } from 'express';
import { GatewayError } from '../src/core/gateway-error';
import { truncateForEcho } from '../src/core/truncate';

/**
 * 415 for a body sent with a Content-Encoding other than `identity` (gzip, deflate, br, …). The gateway keeps and
 * checks bodies byte for byte; a compressed one would be stored and processed compressed. Answered with
 * `Accept-Encoding: identity` (RFC 9110 §15.5.16).
 */
export function refuseContentEncoding(req: Request): void {
  const header = req.headers['content-encoding'];
  if (header === undefined) return;
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return;
  req.res?.set('Accept-Encoding', 'identity');
  throw new GatewayError(
    'UNSUPPORTED_MEDIA_TYPE',
    `Content-Encoding "${truncateForEcho(codings.join(', '), 60)}" is not accepted; send the body uncompressed`,
    { details: { contentEncoding: truncateForEcho(header, 60) } },
  );
}

export type DocumentKind = 'xml' | 'pdf';

/** How far into the body a PDF header may start: PDF readers accept leading bytes within the first 1024. */
export const PDF_HEADER_WINDOW = 1024;
const PDF_HEADER = Buffer.from('%PDF-');
/** Enough of the start of a body to tell XML from PDF, whatever comes before the header within the window. */
export const SNIFF_BYTES = PDF_HEADER_WINDOW + PDF_HEADER.length;

const isXmlSpace = (unit: number): boolean => unit === 0x20 || unit === 0x09 || unit === 0x0a || unit === 0x0d;

/**
 * Whether `head` starts like XML: `<` after an optional byte order mark (UTF-8, or UTF-16 in either order) and
 * whitespace. `undefined` while `head` is whitespace only and shorter than the window: more bytes are needed.
 */
function startsLikeXml(head: Buffer, complete: boolean): boolean | undefined {
  let pos = 0;
  let step = 1;
  let low = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) pos = 3;
  else if (head[0] === 0xff && head[1] === 0xfe) [pos, step, low] = [2, 2, 0];
  else if (head[0] === 0xfe && head[1] === 0xff) [pos, step, low] = [2, 2, 1];
  for (; pos + step <= head.length && pos < SNIFF_BYTES; pos += step) {
    const unit = head[pos + low] as number;
    if (step === 2 && head[pos + 1 - low] !== 0) return false;
    if (unit === 0x3c) return true;
    if (!isXmlSpace(unit)) return false;
  }
  return complete || head.length >= SNIFF_BYTES ? false : undefined;
}

/** Whether `head` holds a PDF header within the window; `undefined` while more bytes could still show one. */
function startsLikePdf(head: Buffer, complete: boolean): boolean | undefined {
  if (head.subarray(0, SNIFF_BYTES).includes(PDF_HEADER)) return true;
  return complete || head.length >= SNIFF_BYTES ? false : undefined;
}

/**
 * What the start of a body is: `xml`, `pdf`, `other`, or `undefined` when `head` is too short to tell and more may
 * come (`complete` false). The `expected` kind is tried first (bytes before a PDF header may well start with `<`).
 * An empty body is `other`.
 */
export function sniffDocumentKind(
  head: Buffer,
  complete: boolean,
  expected: DocumentKind = 'xml',
): DocumentKind | 'other' | undefined {
  const checks = { xml: startsLikeXml, pdf: startsLikePdf };
  for (const kind of expected === 'pdf' ? (['pdf', 'xml'] as const) : (['xml', 'pdf'] as const)) {
    const verdict = checks[kind](head, complete);
    if (verdict === undefined) return undefined;
    if (verdict) return kind;
  }
  return 'other';
}

/** The kind a Content-Type declares: `application/pdf` a PDF, the XML types XML. */
export function declaredKind(mediaType: string): DocumentKind {
  return mediaType === 'application/pdf' ? 'pdf' : 'xml';
}

/** The 415 for a body whose first bytes are not what its Content-Type declares. */
export function kindMismatch(declared: string, found: DocumentKind | 'other'): GatewayError {
  const type = truncateForEcho(declared, 100);
  const what =
    found === 'pdf'
      ? 'it is a PDF; send it as application/pdf'
      : found === 'xml'
        ? 'it is XML; send it as application/xml'
        : declaredKind(declared) === 'pdf'
          ? `it does not start like a PDF ("%PDF-" within its first ${PDF_HEADER_WINDOW} bytes)`
          : 'it is not XML (XML starts with "<", after an optional byte order mark and whitespace)';
  return new GatewayError('UNSUPPORTED_MEDIA_TYPE', `The body is declared ${type}, but ${what}`, {
    details: {
      declaredType: type,
      ...(found === 'other' ? {} : { detectedType: found === 'pdf' ? 'application/pdf' : 'application/xml' }),
    },
  });
}

/**
 * A whole request body held in memory, refused above `limit` bytes as it arrives (for endpoints that keep nothing or
 * parse the whole message: validate, transform, AS4). Uploads stream to storage instead (upload-body.ts).
 */
export function readBody(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(
      new GatewayError('PAYLOAD_TOO_LARGE', `Request body of ${declared} bytes exceeds the limit of ${limit} bytes`, {
        details: { limit },
      }),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(
          new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes`, {
            details: { limit },
          }),
        );
        return;
      }
      chunks.push(chunk);
    };
    let ended = false;
    req.on('data', onData);
    req.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
    // A client that goes away mid-body must not leave the request waiting for an end that never comes.
    req.on('close', () => {
      if (!ended) reject(new GatewayError('BAD_REQUEST', 'Request body incomplete: the connection closed'));
    });
  });
}
