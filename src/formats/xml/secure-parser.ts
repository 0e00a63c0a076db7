import { DOMParser, type Document, type Node } from '@xmldom/xmldom';
import * as xpath from 'xpath';
import { GatewayError } from '../../core/gateway-error';
import {
  assertLegalCharacters,
  positionAt,
  readXmlDeclaration,
  scanXml,
  type ScanLimits,
  type ScanSummary,
  type ScanVisitor,
} from './xml-scanner';
import { ReadTreeBuilder, UNUSUAL_LINE_ENDS, type ReadDocument } from './read-tree';
import { installXmldomRegexCache } from './xmldom-regex-cache';

installXmldomRegexCache();

/**
 * The one place where untrusted XML is parsed. Every document goes through three gates before xmldom sees it:
 *
 * 1. bytes → text: size limit, binary sniffing, byte order mark and declared encoding must agree, strict decoding;
 * 2. character check: only XML 1.0 characters;
 * 3. lexical scan (xml-scanner.ts): DOCTYPE refused wherever it appears, depth / node / attribute limits, balanced
 * tags.
 *
 * Only then is the DOM built, and any xmldom error or warning becomes INVALID_XML. Refusals for safety reasons are
 * UNSAFE_XML, an over-size input PAYLOAD_TOO_LARGE. Error messages start with `line:column:`.
 */

export interface XmlLimits extends ScanLimits {
  /** Maximum input size in bytes (the request limit of the service). */
  maxBytes: number;
}

export const DEFAULT_XML_LIMITS: Readonly<XmlLimits> = Object.freeze({
  maxBytes: 24 * 1024 * 1024,
  maxDepth: 256,
  // xmldom needs roughly 2 KB of heap per element with its text nodes: 500k nodes stays near 1 GB at worst.
  maxNodes: 500_000,
  maxAttributesPerElement: 256,
  // Real invoices carry about one attribute (currencyID, unitCode, schemeID) per two elements: half the node limit.
  // A million attributes once took 400 MB in xmldom; 250k stay near 60 MB.
  maxAttributes: 250_000,
  // Attribute values in e-invoices are codes, identifiers and file names; attachments travel in element content.
  maxAttributeValueLength: 64 * 1024,
});

export function resolveXmlLimits(limits?: Partial<XmlLimits>): XmlLimits {
  return { ...DEFAULT_XML_LIMITS, ...(limits ?? {}) };
}

export interface DecodedXml {
  /** The document text, without byte order mark. */
  text: string;
  /** The encoding the bytes were decoded with (WHATWG name), or 'string' for string input. */
  encoding: string;
  byteLength: number;
}

// ---------------------------------------------------------------------------------------------------------------------
// Bytes to text

const BINARY_SIGNATURES: ReadonlyArray<{ bytes: readonly number[]; what: string }> = [
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d], what: 'a PDF document' },
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], what: 'a PNG image' },
  { bytes: [0xff, 0xd8, 0xff], what: 'a JPEG image' },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: 'a GIF image' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: 'a ZIP archive' },
  { bytes: [0x1f, 0x8b], what: 'gzip-compressed data' },
  { bytes: [0x30, 0x80], what: 'binary ASN.1 data (for example a CAdES-signed .p7m file)' },
  { bytes: [0x30, 0x82], what: 'binary ASN.1 data (for example a CAdES-signed .p7m file)' },
  { bytes: [0x30, 0x83], what: 'binary ASN.1 data (for example a CAdES-signed .p7m file)' },
  { bytes: [0x00, 0x00, 0xfe, 0xff], what: 'UTF-32 text, which is not accepted (use UTF-8)' },
  { bytes: [0xff, 0xfe, 0x00, 0x00], what: 'UTF-32 text, which is not accepted (use UTF-8)' },
  { bytes: [0x4c, 0x6f, 0xa7, 0x94], what: 'EBCDIC-encoded text, which is not accepted (use UTF-8)' },
];

function startsWithBytes(buf: Uint8Array, sig: readonly number[]): boolean {
  if (buf.length < sig.length) return false;
  for (let k = 0; k < sig.length; k++) if (buf[k] !== sig[k]) return false;
  return true;
}

function invalid(reason: string, line = 1, column = 1): GatewayError {
  return new GatewayError('INVALID_XML', `${line}:${column}: ${reason}`, { details: { line, column } });
}

const UTF8_LABELS = /^(utf-?8|unicode-1-1-utf-8)$/i;
const UTF16_LABELS = /^(utf-?16(le|be)?|ucs-?2|unicode|iso-10646-ucs-2|csunicode)$/i;
const ASCII_LABELS = /^(us-?ascii|ascii|ansi_x3\.4-1968|iso646-us|cp367|ibm367|csascii)$/i;
const LATIN1_LABELS = /^(iso[-_]?8859-1|iso8859-1|latin-?1|l1|cp819|ibm819|csisolatin1|iso-ir-100)$/i;

/** Offset of the first byte that starts an ill-formed UTF-8 sequence (WHATWG decoder rules), or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i] as number;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lower = 0x80;
    let upper = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lower = 0xa0;
      if (c === 0xed) upper = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lower = 0x90;
      if (c === 0xf4) upper = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || d < lower || d > upper) return i;
      lower = 0x80;
      upper = 0xbf;
    }
    i += need + 1;
  }
  return -1;
}

function bytePosition(buf: Uint8Array, offset: number): { line: number; column: number } {
  const prefix = new TextDecoder('utf-8').decode(buf.subarray(0, offset));
  return positionAt(prefix, prefix.length);
}

function hexBytes(buf: Uint8Array, offset: number, count: number): string {
  return Array.from(
    buf.subarray(offset, offset + count),
    (x) => `0x${x.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join(' ');
}

function decodeUtf8(buf: Uint8Array, start: number, declared: string | undefined): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf.subarray(start));
  } catch {
    const bad = start + Math.max(0, firstInvalidUtf8(buf.subarray(start)));
    const { line, column } = bytePosition(buf, bad);
    const why = declared
      ? `the document declares encoding "${declared}"`
      : 'the document has no encoding declaration, so it must be UTF-8';
    throw invalid(
      `invalid UTF-8 byte sequence at byte offset ${bad} (${hexBytes(buf, bad, 4)}); ${why}` +
        ' (was it saved as ISO-8859-1 or Windows-1252 without declaring that?)',
      line,
      column,
    );
  }
}

/** Turns untrusted bytes into text, refusing anything whose encoding is unclear or not honoured. */
export function decodeXml(
  input: Buffer | Uint8Array | string,
  maxBytes: number = DEFAULT_XML_LIMITS.maxBytes,
): DecodedXml {
  if (typeof input === 'string') {
    const byteLength = Buffer.byteLength(input, 'utf8');
    if (byteLength > maxBytes)
      throw new GatewayError(
        'PAYLOAD_TOO_LARGE',
        `XML document of ${byteLength} bytes exceeds the limit of ${maxBytes} bytes`,
      );
    if (byteLength === 0) throw invalid('empty document');
    return { text: input.charCodeAt(0) === 0xfeff ? input.slice(1) : input, encoding: 'string', byteLength };
  }

  const buf = input;
  if (buf.length > maxBytes)
    throw new GatewayError(
      'PAYLOAD_TOO_LARGE',
      `XML document of ${buf.length} bytes exceeds the limit of ${maxBytes} bytes`,
    );
  if (buf.length === 0) throw invalid('empty document (0 bytes)');

  for (const sig of BINARY_SIGNATURES) {
    if (startsWithBytes(buf, sig.bytes)) throw invalid(`input is ${sig.what}, not XML`);
  }

  // UTF-16: only with a byte order mark (XML 1.0 §4.3.3 requires it; guessing is how mojibake starts).
  const utf16 =
    buf[0] === 0xfe && buf[1] === 0xff ? 'utf-16be' : buf[0] === 0xff && buf[1] === 0xfe ? 'utf-16le' : undefined;
  if (utf16) {
    let text: string;
    try {
      text = new TextDecoder(utf16, { fatal: true }).decode(buf);
    } catch {
      throw invalid(`invalid ${utf16.toUpperCase()} data (odd byte count or unpaired surrogate)`);
    }
    const decl = readXmlDeclaration(text);
    if (decl?.encoding && !UTF16_LABELS.test(decl.encoding)) {
      throw invalid(
        `the document starts with a ${utf16.toUpperCase()} byte order mark but declares encoding "${decl.encoding}"`,
      );
    }
    return { text, encoding: utf16, byteLength: buf.length };
  }
  if ((buf[0] === 0x3c && buf[1] === 0x00) || (buf[0] === 0x00 && buf[1] === 0x3c)) {
    throw invalid('UTF-16 text without a byte order mark is not accepted (add a BOM or use UTF-8)');
  }

  const bom = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
  const start = bom ? 3 : 0;
  // The declaration is ASCII in every 8-bit encoding accepted here, so it can be read before decoding.
  const decl = readXmlDeclaration(Buffer.from(buf.subarray(start, start + 512)).toString('latin1'));
  const declared = decl?.encoding;

  if (declared && UTF16_LABELS.test(declared)) {
    throw invalid(
      `the document declares encoding "${declared}" but has no UTF-16 byte order mark and is 8-bit encoded`,
    );
  }
  if (bom && declared && !UTF8_LABELS.test(declared)) {
    throw invalid(`the document starts with a UTF-8 byte order mark but declares encoding "${declared}"`);
  }
  if (!declared || UTF8_LABELS.test(declared)) {
    return { text: decodeUtf8(buf, start, declared), encoding: 'utf-8', byteLength: buf.length };
  }
  if (ASCII_LABELS.test(declared)) {
    const bad = buf.findIndex((x) => x > 0x7f);
    if (bad !== -1) {
      const { line, column } = bytePosition(buf, bad);
      throw invalid(
        `the document declares encoding "${declared}" but byte ${hexBytes(buf, bad, 1)} at byte offset ${bad} is ` +
          `not ASCII`,
        line,
        column,
      );
    }
    return { text: Buffer.from(buf).toString('latin1'), encoding: 'us-ascii', byteLength: buf.length };
  }
  if (LATIN1_LABELS.test(declared)) {
    // True ISO-8859-1 (every byte maps to U+0000..U+00FF); the WHATWG label would silently mean Windows-1252.
    return { text: Buffer.from(buf).toString('latin1'), encoding: 'iso-8859-1', byteLength: buf.length };
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(declared, { fatal: true });
  } catch {
    throw invalid(`unsupported encoding "${declared}" (use UTF-8)`);
  }
  if (decoder.encoding === 'utf-8' || decoder.encoding.startsWith('utf-16')) {
    // Labels that are aliases of Unicode encodings were handled above; anything reaching here is unexpected.
    throw invalid(`unsupported encoding label "${declared}" (use UTF-8)`);
  }
  try {
    return { text: decoder.decode(buf), encoding: decoder.encoding, byteLength: buf.length };
  } catch {
    throw invalid(`the bytes are not valid "${declared}", the encoding the document declares`);
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Parsing

/** Decodes and runs every safety and structure check without building a DOM; `visitor` sees the elements. */
export function scanXmlInput(
  input: Buffer | Uint8Array | string,
  limits?: Partial<XmlLimits>,
  visitor?: ScanVisitor,
): ScanSummary & DecodedXml {
  const l = resolveXmlLimits(limits);
  const decoded = decodeXml(input, l.maxBytes);
  assertLegalCharacters(decoded.text);
  return { ...decoded, ...scanXml(decoded.text, l, visitor) };
}

/**
 * Comments longer than this are emptied before the DOM is built: xmldom checks a comment against its grammar with one
 * regular expression, which overflows V8's stack on comments of a few megabytes and would report well-formed XML as
 * malformed. The scanner has already checked every comment; comments carry nothing an invoice means.
 */
const MAX_DOM_COMMENT_CHARS = 64 * 1024;

/**
 * `text` with the body of every comment over MAX_DOM_COMMENT_CHARS replaced by its line breaks only, so line numbers
 * (which schema errors are mapped back by) stay the same. Runs on scanned, well-formed input: a raw `<` only starts
 * markup, and CDATA sections and processing instructions are skipped whole. Throws INVALID_XML for a long comment
 * that breaks the comment grammar.
 */
export function withoutLongComments(text: string): string {
  if (!text.includes('<!--')) return text;
  const parts: string[] = [];
  let copied = 0;
  let i = text.indexOf('<');
  while (i !== -1) {
    if (text.startsWith('<![CDATA[', i)) {
      const end = text.indexOf(']]>', i + 9);
      if (end === -1) break;
      i = text.indexOf('<', end + 3);
    } else if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i + 2);
      if (end === -1) break;
      i = text.indexOf('<', end + 2);
    } else if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end === -1) break;
      if (end - (i + 4) > MAX_DOM_COMMENT_CHARS) {
        const body = text.slice(i + 4, end);
        // The one rule of the comment grammar that xmldom would have checked (XML 1.0 [15]).
        if (body.includes('--') || body.endsWith('-')) {
          const before = text.slice(0, i);
          const line = before.split('\n').length;
          throw invalid('"--" is not allowed inside a comment', line, i - before.lastIndexOf('\n'));
        }
        // Only the line breaks stay; counted without a regular expression, which could itself overflow on megabytes.
        let lines = 0;
        for (let k = body.indexOf('\n'); k !== -1; k = body.indexOf('\n', k + 1)) lines++;
        parts.push(text.slice(copied, i + 4), '\n'.repeat(lines));
        copied = end;
      }
      i = text.indexOf('<', end + 3);
    } else {
      i = text.indexOf('<', i + 1);
    }
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
}

function buildDom(text: string): Document {
  let first: { message: string; line: number; column: number } | undefined;
  const parser = new DOMParser({
    locator: true,
    onError: (level, message, context) => {
      // Encoding problems are caught precisely before parsing (strict decoding); a literal U+FFFD is legal text.
      if (level === 'warning' && /replacement character/i.test(message)) return;
      if (!first) {
        const locator = (context as { locator?: { lineNumber?: number; columnNumber?: number } } | undefined)?.locator;
        first = { message, line: locator?.lineNumber ?? 1, column: locator?.columnNumber ?? 1 };
      }
      // Stop at the first problem: a warning means xmldom repaired something that is not well-formed XML.
      throw new Error(message);
    },
  });
  let doc: Document | undefined;
  try {
    doc = parser.parseFromString(text, 'application/xml');
  } catch (e) {
    if (!first) {
      const message = e instanceof Error ? e.message : String(e);
      const locator = (e as { locator?: { lineNumber?: number; columnNumber?: number } }).locator;
      first = { message, line: locator?.lineNumber ?? 1, column: locator?.columnNumber ?? 1 };
    }
  }
  if (first) throw invalid(first.message, first.line, first.column);
  if (!doc?.documentElement) throw invalid('no root element');
  return doc;
}

/**
 * Parses untrusted XML into a DOM. Throws GatewayError INVALID_XML (not well-formed, bad encoding), UNSAFE_XML
 * (DOCTYPE,
 * limits) or PAYLOAD_TOO_LARGE; never anything else for bad input.
 */
export function parseXml(input: Buffer | Uint8Array | string, limits?: Partial<XmlLimits>): Document {
  const { text } = scanXmlInput(input, limits);
  return buildDom(withoutLongComments(text));
}

/** Every character `assertLegalCharacters` or `UNUSUAL_LINE_ENDS` could object to (all surrogates, paired or not). */
const NEEDS_CHARACTER_CHECKS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u0085\u2028\u2029\uD800-\uDFFF\uFFFE\uFFFF]/;

/**
 * Parses untrusted XML for reading only (transformation input): the same gates and errors as `parseXml`, but the tree
 * comes from the scanner's pass (read-tree.ts) instead of xmldom. A document the light tree cannot represent exactly as
 * xmldom would is parsed by xmldom, so the result, or the error, is the same as `parseXml`'s.
 */
export function parseXmlForReading(input: Buffer | Uint8Array | string, limits?: Partial<XmlLimits>): ReadDocument {
  const l = resolveXmlLimits(limits);
  const { text } = decodeXml(input, l.maxBytes);
  // One pass over the text for both character checks: only a text with a control character, a surrogate, U+FFFE/F or
  // an unusual line end needs the exact ones (most invoices have none of these).
  const unusual = NEEDS_CHARACTER_CHECKS.test(text);
  if (unusual) assertLegalCharacters(text);
  const builder = new ReadTreeBuilder();
  scanXml(text, l, builder);
  if (builder.unsupported !== undefined || (unusual && UNUSUAL_LINE_ENDS.test(text)))
    return buildDom(withoutLongComments(text));
  return builder.document;
}

// ---------------------------------------------------------------------------------------------------------------------
// Namespace-aware XPath helpers. Prefixes in expressions are bound by the caller's map, never by the document.

export type NamespaceMap = Readonly<Record<string, string>>;
export type XPathVariables = Readonly<Record<string, string | number | boolean>>;

interface XPathResultLike {
  toArray?: () => unknown[];
  stringValue(): string;
}
interface NamespaceResolver {
  getNamespace(prefix: string): string;
}
interface CompiledXPath {
  evaluate(options: { node: unknown; namespaces?: NamespaceResolver; variables?: XPathVariables }): XPathResultLike;
}

const xpathApi = xpath as unknown as { parse(expression: string): CompiledXPath; XNodeSet: new () => unknown };
const compiled = new Map<string, CompiledXPath>();

function compile(expression: string): CompiledXPath {
  let c = compiled.get(expression);
  if (!c) {
    c = xpathApi.parse(expression);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(expression, c);
  }
  return c;
}

function resolverFor(namespaces: NamespaceMap): NamespaceResolver {
  return {
    getNamespace(prefix: string): string {
      const uri = Object.prototype.hasOwnProperty.call(namespaces, prefix) ? namespaces[prefix] : undefined;
      if (uri !== undefined) return uri;
      if (prefix === 'xml') return 'http://www.w3.org/XML/1998/namespace';
      // Without this the xpath library would fall back to the prefixes declared in the document itself.
      throw new TypeError(`XPath prefix "${prefix}" is not bound in the namespace map`);
    },
  };
}

function evaluate(
  context: Node,
  expression: string,
  namespaces: NamespaceMap,
  variables?: XPathVariables,
): XPathResultLike {
  return compile(expression).evaluate({
    node: context,
    namespaces: resolverFor(namespaces),
    ...(variables ? { variables } : {}),
  });
}

/** Nodes selected by `expression`; its prefixes are resolved through `namespaces`. */
export function select(
  context: Node,
  expression: string,
  namespaces: NamespaceMap = {},
  variables?: XPathVariables,
): Node[] {
  const r = evaluate(context, expression, namespaces, variables);
  if (!(r instanceof xpathApi.XNodeSet) || !r.toArray)
    throw new TypeError(`XPath "${expression}" does not select nodes`);
  return r.toArray() as Node[];
}

export function selectOne(
  context: Node,
  expression: string,
  namespaces: NamespaceMap = {},
  variables?: XPathVariables,
): Node | undefined {
  return select(context, expression, namespaces, variables)[0];
}

/**
 * The trimmed text of the first selected node, or the string value of a non-node expression. Undefined when nothing
 * is selected (an empty element gives '').
 */
export function text(
  context: Node,
  expression: string,
  namespaces: NamespaceMap = {},
  variables?: XPathVariables,
): string | undefined {
  const r = evaluate(context, expression, namespaces, variables);
  if (r instanceof xpathApi.XNodeSet && r.toArray) {
    const first = r.toArray()[0] as Node | undefined;
    return first === undefined ? undefined : (first.textContent ?? '').trim();
  }
  return r.stringValue();
}
