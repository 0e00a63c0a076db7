import { GatewayError, type GatewayErrorCode } from '../../core/gateway-error';

/**
 * A single-pass lexical scanner over decoded XML text. It runs before any DOM is built and is the gate that makes
 * untrusted XML safe to hand to xmldom: it refuses DOCTYPE and other markup declarations wherever they appear (so no
 * entity is ever declared, let alone expanded), bounds nesting depth, node and attribute counts and attribute sizes
 * (each refusal an UNSAFE_XML whose details name the limit: `reason`, `limit`), and checks the structural
 * well-formedness a truncated or non-XML body breaks (balanced tags, one root, no text outside it, entity and character
 * references, no `]]>` in character data). It is linear in the input: every search moves forward only.
 *
 * It also resolves namespace prefixes (an undeclared prefix is an error, as in xmldom) and refuses duplicate
 * attributes.
 * The optional visitor receives start/end tags with their resolved namespace and, when it asks for it, decoded
 * character data; format detection uses it to read identifiers from large documents without building a DOM.
 */

export interface ScanLimits {
  /** Maximum element nesting depth. */
  maxDepth: number;
  /** Maximum number of markup nodes: elements, comments, processing instructions and CDATA sections. */
  maxNodes: number;
  maxAttributesPerElement: number;
  /**
   * Maximum number of attributes in the whole document (namespace declarations included). Each costs a DOM some
   * 250 bytes of heap for as few as 6 bytes of input, so attributes need a count of their own besides the nodes.
   */
  maxAttributes: number;
  /** Maximum length of one attribute value, in characters. */
  maxAttributeValueLength: number;
}

export interface RawAttribute {
  name: string;
  /** The value with character and predefined entity references resolved and attribute-value normalisation applied. */
  value: string;
}

export interface ScanVisitor {
  /** `namespaceURI` is resolved from the in-scope declarations ('' for no namespace). */
  /**
   * `plainName`: the name is an ASCII QName, `[A-Za-z_][A-Za-z0-9_.-]*` with at most one `:` followed by the same
   * (what xmldom accepts without question).
   */
  startElement(
    name: string,
    attributes: readonly RawAttribute[],
    offset: number,
    namespaceURI: string,
    localName: string,
    plainName: boolean,
  ): void;
  endElement(name: string, offset: number): void;
  /** Read before each run of character data; false keeps the scan free of string copies. */
  readonly wantsText: boolean;
  /** Decoded character data (text or CDATA content, `cdata` true for the latter) inside the current element. */
  text(value: string, cdata?: boolean): void;
  /**
   * Line ends in text and CDATA turned into a line feed (`\r\n` and `\r`), as an XML processor must before parsing;
   * character references keep their character. Off, text is passed as written.
   */
  readonly normalizeLineEndings?: boolean;
  /** Comments and processing instructions, anywhere in the document (the XML declaration is not one). */
  comment?(data: string): void;
  processingInstruction?(target: string, data: string): void;
}

export interface ScanSummary {
  rootName: string;
  nodes: number;
  maxDepthSeen: number;
}

const XML_DECL =
  /^<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(["'])([^"']*)\1(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(["'])([A-Za-z][A-Za-z0-9._-]*)\3)?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(["'])(yes|no)\5)?[ \t\r\n]*\?>/;

const REFERENCE = /&(?:#([0-9]{1,10})|#x([0-9a-fA-F]{1,8})|(lt|gt|amp|apos|quot));/y;

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';

// Not frozen: V8 iterates frozen arrays on a slower path, and the readonly type already keeps visitors off it.
const NO_ATTRIBUTES: readonly RawAttribute[] = [];

/** Markup declarations that only make sense inside a DTD; their presence anywhere is treated as an attack. */
const DTD_MARKUP = /^<!(DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)/i;

export interface XmlDeclaration {
  version: string;
  encoding: string | undefined;
  standalone: string | undefined;
  /** Length of the declaration in characters (it always starts at offset 0). */
  length: number;
}

/** 1-based line and column of a character offset. */
export function positionAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  let nl = text.indexOf('\n');
  while (nl !== -1 && nl < end) {
    line++;
    lineStart = nl + 1;
    nl = text.indexOf('\n', lineStart);
  }
  return { line, column: end - lineStart + 1 };
}

/** Reason codes of the limit refusals (UNSAFE_XML), in the error's details beside the limit. */
export type XmlLimitReason =
  | 'XML_TOO_DEEP'
  | 'XML_TOO_MANY_NODES'
  | 'XML_TOO_MANY_ATTRIBUTES'
  | 'XML_TOO_MANY_ATTRIBUTES_PER_ELEMENT'
  | 'XML_ATTRIBUTE_TOO_LONG';

export function xmlError(
  code: GatewayErrorCode,
  text: string,
  offset: number,
  reason: string,
  extra?: { reason: XmlLimitReason; limit: number },
): GatewayError {
  const { line, column } = positionAt(text, offset);
  return new GatewayError(code, `${line}:${column}: ${reason}`, { details: { line, column, ...extra } });
}

/**
 * Reads the XML declaration at the start of `text` (after any BOM has been removed). Returns undefined when there is
 * none; throws INVALID_XML when one is present but malformed.
 */
export function readXmlDeclaration(text: string): XmlDeclaration | undefined {
  if (!text.startsWith('<?xml')) return undefined;
  const next = text.charCodeAt(5);
  // `<?xml-stylesheet ...?>` and friends are ordinary processing instructions.
  if (!(next === 0x20 || next === 0x09 || next === 0x0a || next === 0x0d || next === 0x3f)) return undefined;
  const m = XML_DECL.exec(text.slice(0, 512));
  if (!m) throw xmlError('INVALID_XML', text, 0, 'malformed XML declaration');
  const version = m[2] ?? '';
  if (version !== '1.0') {
    throw xmlError('INVALID_XML', text, 0, `XML version "${version}" is not supported (only 1.0)`);
  }
  return { version, encoding: m[4], standalone: m[6], length: m[0].length };
}

/** XML 1.0 §2.11 end-of-line handling. */
function newlines(text: string): string {
  return text.indexOf('\r') === -1 ? text : text.replace(/\r\n?/g, '\n');
}

function isXmlWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isLegalCodePoint(cp: number): boolean {
  return (
    cp === 0x9 ||
    cp === 0xa ||
    cp === 0xd ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/** Characters that are not XML 1.0 `Char`s, including unpaired surrogates. */
const ILLEGAL_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function assertLegalCharacters(text: string): void {
  const m = ILLEGAL_CHAR.exec(text);
  if (m) {
    const cp = m[0].charCodeAt(0);
    throw xmlError(
      'INVALID_XML',
      text,
      m.index,
      `character U+${cp.toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML 1.0`,
    );
  }
}

// Name characters by class: 1 ends a name (whitespace, '/', '>', '=', '<', quotes), 2 is a plain ASCII name character
// ([A-Za-z0-9_.:-]), 0 anything else. A table: the scanner looks at every character of every name.
const TERMINATOR = 1;
const PLAIN = 2;
const NAME_CLASS = new Uint8Array(128);
for (const c of [0x20, 0x09, 0x0a, 0x0d, 0x2f, 0x3e, 0x3d, 0x3c, 0x22, 0x27]) NAME_CLASS[c] = TERMINATOR;
for (let c = 0; c < 128; c++) if (/[A-Za-z0-9_.:-]/.test(String.fromCharCode(c))) NAME_CLASS[c] = PLAIN;

function isNameTerminator(c: number): boolean {
  return c < 128 && NAME_CLASS[c] === TERMINATOR;
}

/** [A-Za-z_]: what starts a plain name and each of its parts. */
function isPlainNameStart(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

function isBadNameStart(c: number): boolean {
  // digits, '-', '.', and anything that ends a name; xmldom checks the finer NameStartChar rules
  return (
    Number.isNaN(c) ||
    isNameTerminator(c) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x21 ||
    c === 0x3f
  );
}

/** End of the name starting at `from`: the first terminator, or the end of the text. */
function nameEndFrom(s: string, from: number): number {
  const n = s.length;
  let j = from;
  while (j < n) {
    const c = s.charCodeAt(j);
    if (c < 128 && NAME_CLASS[c] === TERMINATOR) break;
    j++;
  }
  return j;
}

export function scanXml(text: string, limits: ScanLimits, visitor?: ScanVisitor): ScanSummary {
  const s = text;
  const n = s.length;
  let i = 0;
  if (s.charCodeAt(0) === 0xfeff) i = 1;

  const fail = (code: GatewayErrorCode, offset: number, reason: string): never => {
    throw xmlError(code, s, offset, reason);
  };
  const refuse = (offset: number, reason: string, why: XmlLimitReason, limit: number): never => {
    throw xmlError('UNSAFE_XML', s, offset, reason, { reason: why, limit });
  };

  const decl = readXmlDeclaration(i === 0 ? s : s.slice(i));
  if (decl) i += decl.length;

  // Cursor on the next '&' at or after the scan position; only ever moves forward, keeping reference checks linear.
  let nextAmp = s.indexOf('&', i);
  const ampFrom = (from: number): number => {
    if (nextAmp !== -1 && nextAmp < from) nextAmp = s.indexOf('&', from);
    return nextAmp;
  };

  // Line-end normalisation only has work to do when the text has a carriage return at all.
  const lineEnds = visitor?.normalizeLineEndings === true && s.indexOf('\r') !== -1;
  /** Text [a, b) as written, with attribute-value normalisation (`normalise`) or the line-end handling applied. */
  const literal = (a: number, b: number, normalise: boolean): string =>
    normalise ? s.slice(a, b).replace(/\r\n|[\t\n\r]/g, ' ') : lineEnds ? newlines(s.slice(a, b)) : s.slice(a, b);

  /**
   * Validates every reference in [start, end) and, when `decode`, returns the decoded text. `normalise` applies
   * attribute-value normalisation to the literal parts only: whitespace produced by a character reference is kept.
   */
  const references = (start: number, end: number, decode: boolean, normalise = false): string => {
    let out = '';
    let from = start;
    let amp = ampFrom(start);
    while (amp !== -1 && amp < end) {
      REFERENCE.lastIndex = amp;
      const m = REFERENCE.exec(s);
      if (!m || m.index + m[0].length > end) {
        const shown = s.slice(amp, Math.min(end, amp + 12)).split(/[\s<]/)[0];
        fail(
          'INVALID_XML',
          amp,
          `malformed or undefined entity reference "${shown}" (only the five predefined entities and character ` +
            `references are allowed)`,
        );
      }
      const ref = m as RegExpExecArray;
      let value: string;
      if (ref[3] !== undefined) {
        value = PREDEFINED[ref[3]] as string;
      } else {
        const cp = ref[1] !== undefined ? Number.parseInt(ref[1], 10) : Number.parseInt(ref[2] as string, 16);
        if (!isLegalCodePoint(cp))
          fail('INVALID_XML', amp, `character reference "${ref[0]}" is not a legal XML character`);
        value = String.fromCodePoint(cp);
      }
      if (decode) out += literal(from, amp, normalise) + value;
      from = amp + ref[0].length;
      amp = ampFrom(from);
    }
    return decode ? out + literal(from, end, normalise) : '';
  };

  const stack: string[] = [];
  const stackOffsets: number[] = [];
  // The prefixes in scope of each open element, innermost last: an element that declares none shares its parent's
  // map, so resolving a prefix is one lookup rather than a walk up the open elements.
  const scopes: Array<ReadonlyMap<string, string>> = [];
  const NONE_IN_SCOPE: ReadonlyMap<string, string> = new Map();
  const inScope = (): ReadonlyMap<string, string> => scopes[scopes.length - 1] ?? NONE_IN_SCOPE;
  const resolve = (prefix: string, local: Map<string, string> | undefined): string | undefined => {
    if (prefix === 'xml') return XML_NAMESPACE;
    const uri = local?.get(prefix) ?? inScope().get(prefix);
    if (uri !== undefined) return uri;
    return prefix === '' ? '' : undefined;
  };
  let nodes = 0;
  let maxDepthSeen = 0;
  let rootName = '';
  let rootClosed = false;

  let attributesSeen = 0;
  const countNode = (offset: number): void => {
    nodes++;
    const max = limits.maxNodes;
    if (nodes > max) refuse(offset, `document has more than ${max} markup nodes`, 'XML_TOO_MANY_NODES', max);
  };

  // Cursor on the next ']]>' at or after the scan position, moving forward only like the '&' one: the sequence may
  // not appear in character data (XML 1.0 [14]); CDATA sections, comments and attribute values are not character data.
  let nextCdataEnd = s.indexOf(']]>', i);
  const cdataEndFrom = (from: number): number => {
    if (nextCdataEnd !== -1 && nextCdataEnd < from) nextCdataEnd = s.indexOf(']]>', from);
    return nextCdataEnd;
  };

  while (i < n) {
    const lt = s.indexOf('<', i);
    const textEnd = lt === -1 ? n : lt;

    if (textEnd > i) {
      if (stack.length === 0) {
        for (let k = i; k < textEnd; k++) {
          if (!isXmlWhitespace(s.charCodeAt(k))) {
            if (rootName === '') {
              const ch = s[k] as string;
              const hint = ch === '{' || ch === '[' ? ' (this looks like JSON)' : '';
              fail('INVALID_XML', k, `content is not XML: expected '<' but found '${ch}'${hint}`);
            }
            fail('INVALID_XML', k, 'text after the end of the root element');
          }
        }
      } else {
        const cdataEnd = cdataEndFrom(i);
        if (cdataEnd !== -1 && cdataEnd + 2 < textEnd) {
          fail('INVALID_XML', cdataEnd, "']]>' is not allowed in character data (write '>' as &gt;)");
        }
        if (visitor?.wantsText) visitor.text(references(i, textEnd, true));
        else references(i, textEnd, false);
      }
    }
    if (lt === -1) break;

    const c = s.charCodeAt(lt + 1);
    if (c === 0x3f /* ? */) {
      const end = s.indexOf('?>', lt + 2);
      if (end === -1) fail('INVALID_XML', lt, 'unterminated processing instruction (document truncated?)');
      let t = lt + 2;
      while (t < end && !isXmlWhitespace(s.charCodeAt(t))) t++;
      const target = s.slice(lt + 2, t);
      if (target.toLowerCase() === 'xml')
        fail('INVALID_XML', lt, 'XML declaration is only allowed at the very start of the document');
      if (target === '') fail('INVALID_XML', lt, 'processing instruction without a target');
      countNode(lt);
      if (visitor?.processingInstruction) {
        let d = t;
        while (d < end && isXmlWhitespace(s.charCodeAt(d))) d++;
        visitor.processingInstruction(target, s.slice(d, end));
      }
      i = end + 2;
      continue;
    }

    if (c === 0x21 /* ! */) {
      if (s.startsWith('--', lt + 2)) {
        const end = s.indexOf('-->', lt + 4);
        if (end === -1) fail('INVALID_XML', lt, 'unterminated comment (document truncated?)');
        countNode(lt);
        visitor?.comment?.(s.slice(lt + 4, end));
        i = end + 3;
        continue;
      }
      if (s.startsWith('[CDATA[', lt + 2)) {
        if (stack.length === 0) fail('INVALID_XML', lt, 'CDATA section outside the root element');
        const end = s.indexOf(']]>', lt + 9);
        if (end === -1) fail('INVALID_XML', lt, 'unterminated CDATA section (document truncated?)');
        countNode(lt);
        if (visitor?.wantsText) visitor.text(literal(lt + 9, end, false), true);
        i = end + 3;
        continue;
      }
      const dtd = DTD_MARKUP.exec(s.slice(lt, lt + 10));
      if (dtd) {
        const what = (dtd[1] as string).toUpperCase();
        fail(
          'UNSAFE_XML',
          lt,
          what === 'DOCTYPE'
            ? 'DOCTYPE declarations are not accepted (DTDs, entity declarations and external references are refused)'
            : `<!${what} declarations are not accepted (DTD markup is refused)`,
        );
      }
      fail('INVALID_XML', lt, "unexpected markup after '<!'");
    }

    if (c === 0x2f /* / */) {
      const gt = s.indexOf('>', lt + 2);
      if (gt === -1) fail('INVALID_XML', lt, 'unterminated end tag (document truncated?)');
      // `</name >` may carry whitespace before '>'.
      let nameEnd = gt;
      while (nameEnd > lt + 2 && isXmlWhitespace(s.charCodeAt(nameEnd - 1))) nameEnd--;
      const name = s.slice(lt + 2, nameEnd);
      const open = stack.pop();
      if (open === undefined) fail('INVALID_XML', lt, `end tag </${name}> without a matching start tag`);
      if (name !== open) {
        const at = positionAt(s, stackOffsets[stackOffsets.length - 1] as number);
        fail(
          'INVALID_XML',
          lt,
          `end tag </${name}> does not match start tag <${open}> opened at ${at.line}:${at.column}`,
        );
      }
      stackOffsets.pop();
      scopes.pop();
      visitor?.endElement(name, lt);
      if (stack.length === 0) rootClosed = true;
      i = gt + 1;
      continue;
    }

    // Start tag.
    if (isBadNameStart(c))
      fail('INVALID_XML', lt, lt + 1 >= n ? "unexpected end of document after '<'" : "invalid character after '<'");
    if (rootClosed) fail('INVALID_XML', lt, 'a second root element follows the end of the root element');
    // The element name, noting on the way whether it is a plain ASCII QName (visitors that mirror xmldom need to know).
    let j = lt + 1;
    let plainChars = true;
    while (j < n) {
      const k = s.charCodeAt(j);
      const cls = k < 128 ? (NAME_CLASS[k] as number) : 0;
      if (cls === TERMINATOR) break;
      if (cls !== PLAIN) plainChars = false;
      j++;
    }
    const name = s.slice(lt + 1, j);
    // Allocated on the first attribute: most elements of an invoice have none.
    let attributes: RawAttribute[] | undefined;
    let attributeNames: string[] | undefined;
    let declarations: Map<string, string> | undefined;
    let attributeCount = 0;
    let selfClosing = false;
    let closed = false;
    while (j < n) {
      const ws = j;
      while (j < n && isXmlWhitespace(s.charCodeAt(j))) j++;
      if (j >= n) break;
      const ch = s.charCodeAt(j);
      if (ch === 0x3e /* > */) {
        closed = true;
        j++;
        break;
      }
      if (ch === 0x2f /* / */) {
        if (s.charCodeAt(j + 1) !== 0x3e) fail('INVALID_XML', j, `expected '/>' in start tag <${name}>`);
        selfClosing = true;
        closed = true;
        j += 2;
        break;
      }
      if (ws === j) fail('INVALID_XML', j, `whitespace required before attribute in start tag <${name}>`);
      const nameStart = j;
      j = nameEndFrom(s, j);
      const attrName = s.slice(nameStart, j);
      if (attrName === '') fail('INVALID_XML', j, `malformed attribute in start tag <${name}>`);
      while (j < n && isXmlWhitespace(s.charCodeAt(j))) j++;
      if (s.charCodeAt(j) !== 0x3d /* = */) {
        fail(
          'INVALID_XML',
          j,
          j >= n
            ? 'unexpected end of document inside a start tag (document truncated?)'
            : `attribute "${attrName}" has no value`,
        );
      }
      j++;
      while (j < n && isXmlWhitespace(s.charCodeAt(j))) j++;
      const quote = s.charCodeAt(j);
      if (quote !== 0x22 && quote !== 0x27) {
        fail(
          'INVALID_XML',
          j,
          j >= n
            ? 'unexpected end of document inside a start tag (document truncated?)'
            : `value of attribute "${attrName}" must be quoted`,
        );
      }
      const valueStart = j + 1;
      const valueEnd = s.indexOf(quote === 0x22 ? '"' : "'", valueStart);
      if (valueEnd === -1)
        fail('INVALID_XML', j, `unterminated value of attribute "${attrName}" (document truncated?)`);
      if (valueEnd - valueStart > limits.maxAttributeValueLength) {
        const max = limits.maxAttributeValueLength;
        const what = `value of attribute "${attrName}" is longer than ${max} characters`;
        refuse(valueStart, what, 'XML_ATTRIBUTE_TOO_LONG', max);
      }
      const ltInValue = s.indexOf('<', valueStart);
      if (ltInValue !== -1 && ltInValue < valueEnd)
        fail('INVALID_XML', ltInValue, `'<' is not allowed in the value of attribute "${attrName}"`);
      attributeCount++;
      if (attributeCount > limits.maxAttributesPerElement) {
        const max = limits.maxAttributesPerElement;
        const what = `element <${name}> has more than ${max} attributes`;
        refuse(nameStart, what, 'XML_TOO_MANY_ATTRIBUTES_PER_ELEMENT', max);
      }
      if (++attributesSeen > limits.maxAttributes) {
        const max = limits.maxAttributes;
        refuse(nameStart, `document has more than ${max} attributes`, 'XML_TOO_MANY_ATTRIBUTES', max);
      }
      if (attributeNames === undefined) attributeNames = [attrName];
      else if (attributeNames.includes(attrName))
        fail('INVALID_XML', nameStart, `attribute "${attrName}" appears more than once in start tag <${name}>`);
      else attributeNames.push(attrName);
      const isDeclaration = attrName === 'xmlns' || attrName.startsWith('xmlns:');
      if (visitor || isDeclaration) {
        const value = references(valueStart, valueEnd, true, true);
        if (visitor) (attributes ??= []).push({ name: attrName, value });
        if (isDeclaration) {
          const prefix = attrName === 'xmlns' ? '' : attrName.slice(6);
          if (prefix !== '' && value === '')
            fail('INVALID_XML', nameStart, `namespace prefix "${prefix}" cannot be undeclared in XML 1.0`);
          (declarations ??= new Map()).set(prefix, value);
        }
      } else {
        references(valueStart, valueEnd, false);
      }
      j = valueEnd + 1;
    }
    if (!closed) fail('INVALID_XML', lt, `unexpected end of document inside start tag <${name}> (document truncated?)`);

    countNode(lt);
    const colon = name.indexOf(':');
    const namespaceURI = resolve(colon === -1 ? '' : name.slice(0, colon), declarations);
    if (namespaceURI === undefined)
      fail('INVALID_XML', lt, `namespace prefix "${name.slice(0, colon)}" of element <${name}> is not declared`);
    if (attributeNames !== undefined) {
      for (const a of attributeNames) {
        const c = a.indexOf(':');
        if (c !== -1 && !a.startsWith('xmlns:') && resolve(a.slice(0, c), declarations) === undefined) {
          fail('INVALID_XML', lt, `namespace prefix "${a.slice(0, c)}" of attribute "${a}" is not declared`);
        }
      }
    }
    if (rootName === '') rootName = name;
    if (visitor) {
      const plainName =
        plainChars &&
        isPlainNameStart(c) &&
        (colon === -1 || (isPlainNameStart(name.charCodeAt(colon + 1)) && name.indexOf(':', colon + 1) === -1));
      visitor.startElement(
        name,
        attributes ?? NO_ATTRIBUTES,
        lt,
        namespaceURI as string,
        colon === -1 ? name : name.slice(colon + 1),
        plainName,
      );
    }
    if (selfClosing) {
      visitor?.endElement(name, lt);
      if (stack.length === 0) rootClosed = true;
    } else {
      stack.push(name);
      stackOffsets.push(lt);
      scopes.push(declarations ? new Map([...inScope(), ...declarations]) : inScope());
      if (stack.length > maxDepthSeen) maxDepthSeen = stack.length;
      const max = limits.maxDepth;
      if (stack.length > max) refuse(lt, `element nesting deeper than ${max} levels`, 'XML_TOO_DEEP', max);
    }
    i = j;
  }

  if (stack.length > 0) {
    const open = stack
      .slice(-3)
      .reverse()
      .map((e) => `<${e}>`)
      .join(', ');
    fail(
      'INVALID_XML',
      n,
      `unexpected end of document: ${stack.length} element(s) not closed, innermost ${open} (document truncated?)`,
    );
  }
  if (rootName === '') {
    fail('INVALID_XML', n, /^[\s\uFEFF]*$/.test(s) ? 'empty document' : 'no root element');
  }
  return { rootName, nodes, maxDepthSeen };
}
