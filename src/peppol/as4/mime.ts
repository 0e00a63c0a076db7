/**
 * SOAP-with-attachments packaging: multipart/related parsing and building. Bodies stay binary (no charset decoding);
 * headers are read case-insensitively; a preamble before the first boundary is tolerated, as are LF-only line ends
 * from careless peers. The SOAP envelope is the `start` part when one is named, else the first part (phase4 sends
 * no `start` and always puts the envelope first, so do we).
 */
import { EbmsError } from './ebms-error';

export interface MimePart {
  /** Header names lower-cased. */
  headers: Record<string, string>;
  contentType: string;
  /** Content-ID without the angle brackets. */
  contentId: string | undefined;
  body: Buffer;
}

export interface ContentType {
  type: string;
  params: Record<string, string>;
}

/** `type/subtype; a=b; c="d"` → lower-cased type and parameter names, unquoted values. */
export function parseContentType(header: string): ContentType {
  const [typePart, ...rest] = splitParams(header);
  const params: Record<string, string> = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i <= 0) continue;
    let v = p.slice(i + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    params[p.slice(0, i).trim().toLowerCase()] = v;
  }
  return { type: (typePart ?? '').trim().toLowerCase(), params };
}

function splitParams(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '"' && s[i - 1] !== '\\') quoted = !quoted;
    if (c === ';' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function mimeError(message: string): EbmsError {
  return new EbmsError('EBMS:0007', message, { code: 'BAD_REQUEST' });
}

/** Parses header lines (with folding) into a lower-cased map. */
export function parseHeaderBlock(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  let last: string | undefined;
  for (const line of block.split(/\r?\n/)) {
    if (line === '') continue;
    if ((line.startsWith(' ') || line.startsWith('\t')) && last) {
      headers[last] += ` ${line.trim()}`;
      continue;
    }
    const i = line.indexOf(':');
    if (i <= 0) throw mimeError(`malformed MIME header line "${line.slice(0, 80)}"`);
    last = line.slice(0, i).trim().toLowerCase();
    headers[last] = line.slice(i + 1).trim();
  }
  return headers;
}

function headerEnd(buf: Buffer, from: number): { end: number; bodyStart: number } | undefined {
  const crlf = buf.indexOf('\r\n\r\n', from);
  const lf = buf.indexOf('\n\n', from);
  if (crlf < 0 && lf < 0) return undefined;
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return { end: crlf, bodyStart: crlf + 4 };
  return { end: lf, bodyStart: lf + 2 };
}

function decodeTransfer(body: Buffer, encoding: string | undefined): Buffer {
  const e = (encoding ?? 'binary').trim().toLowerCase();
  if (e === 'binary' || e === '8bit' || e === '7bit') return body;
  if (e === 'base64') {
    const text = body.toString('latin1').replace(/[\r\n\t ]+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw mimeError('invalid base64 MIME part');
    return Buffer.from(text, 'base64');
  }
  throw mimeError(`unsupported Content-Transfer-Encoding "${encoding}"`);
}

export interface MultipartOptions {
  /** Refuse more parts than this (a Peppol message has two). Default 16. */
  maxParts?: number;
}

/** Splits a multipart/related body into its parts. Throws EbmsError(EBMS:0007) for anything malformed. */
export function parseMultipart(
  body: Buffer,
  contentTypeHeader: string,
  options: MultipartOptions = {},
): { parts: MimePart[]; start: string | undefined } {
  const ct = parseContentType(contentTypeHeader);
  if (!ct.type.startsWith('multipart/'))
    throw mimeError(`expected a multipart body, got ${ct.type || 'no content type'}`);
  const boundary = ct.params.boundary;
  if (!boundary || boundary.length > 200) throw mimeError('the multipart content type has no usable boundary');
  const maxParts = options.maxParts ?? 16;
  const delimiter = Buffer.from(`--${boundary}`);

  // The first delimiter may be preceded by a preamble; later ones always follow a line break.
  let pos = body.indexOf(delimiter);
  if (pos < 0 || (pos > 0 && body[pos - 1] !== 0x0a)) throw mimeError('the multipart boundary was not found');
  const parts: MimePart[] = [];
  for (;;) {
    let after = pos + delimiter.length;
    if (body[after] === 0x2d && body[after + 1] === 0x2d) break; // closing delimiter "--boundary--"
    // Rest of the delimiter line (transport padding), then the line break.
    while (after < body.length && (body[after] === 0x20 || body[after] === 0x09)) after++;
    if (body[after] === 0x0d) after++;
    if (body[after] !== 0x0a) throw mimeError('malformed multipart delimiter line');
    after++;
    const h = headerEnd(body, after);
    if (!h) throw mimeError('a MIME part has no end of headers');
    const headers = parseHeaderBlock(body.subarray(after, h.end).toString('latin1'));
    let next = body.indexOf(delimiter, h.bodyStart);
    // A delimiter only counts at the start of a line.
    while (next >= 0 && body[next - 1] !== 0x0a) next = body.indexOf(delimiter, next + 1);
    if (next < 0) throw mimeError('the multipart body is not terminated by its boundary');
    let end = next - 1; // drop the LF before the delimiter…
    if (body[end - 1] === 0x0d) end--; // …and the CR
    const raw = body.subarray(h.bodyStart, Math.max(end, h.bodyStart));
    const cid = headers['content-id']?.trim().replace(/^<(.*)>$/, '$1');
    parts.push({
      headers,
      contentType: headers['content-type'] ?? 'text/plain',
      contentId: cid,
      body: decodeTransfer(raw, headers['content-transfer-encoding']),
    });
    if (parts.length > maxParts) throw mimeError(`more than ${maxParts} MIME parts`);
    pos = next;
  }
  if (parts.length === 0) throw mimeError('the multipart body has no parts');
  const start = ct.params.start?.replace(/^<(.*)>$/, '$1');
  return { parts, start };
}

/** The SOAP part and the attachments of a parsed message. */
export function splitSoapAndAttachments(parsed: { parts: MimePart[]; start: string | undefined }): {
  soap: MimePart;
  attachments: MimePart[];
} {
  const index = parsed.start ? parsed.parts.findIndex((p) => p.contentId === parsed.start) : 0;
  if (index < 0) throw mimeError(`the multipart start part <${parsed.start}> does not exist`);
  const soap = parsed.parts[index] as MimePart;
  if (!parseContentType(soap.contentType).type.endsWith('soap+xml'))
    throw mimeError(`the root MIME part is ${soap.contentType}, not application/soap+xml`);
  return { soap, attachments: parsed.parts.filter((_, i) => i !== index) };
}

export interface OutgoingPart {
  contentType: string;
  contentId?: string;
  body: Buffer;
  extraHeaders?: Record<string, string>;
}

/** Builds multipart/related with the SOAP envelope first (binary transfer encoding throughout). */
export function buildMultipart(
  parts: readonly OutgoingPart[],
  boundary: string,
): { contentType: string; body: Buffer } {
  if (!/^[0-9A-Za-z'()+_,\-./:=?]{1,69}[0-9A-Za-z'()+_,\-./:=?]$/.test(boundary))
    throw new Error(`invalid MIME boundary "${boundary}"`);
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if (p.body.includes(`--${boundary}`)) throw new Error('a MIME part contains the boundary');
    const headers = [`Content-Type: ${p.contentType}`, 'Content-Transfer-Encoding: binary'];
    if (p.contentId) headers.push(`Content-ID: <${p.contentId}>`);
    for (const [k, v] of Object.entries(p.extraHeaders ?? {})) headers.push(`${k}: ${v}`);
    chunks.push(
      Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'),
      p.body,
      Buffer.from('\r\n', 'latin1'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`, 'latin1'));
  return {
    contentType: `multipart/related; boundary="${boundary}"; type="application/soap+xml"`,
    body: Buffer.concat(chunks),
  };
}
