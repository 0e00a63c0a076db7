import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { detectFormat } from '../../../src/formats/detect';
import { NS, UBL_NS } from '../../../src/formats/xml/namespaces';
import {
  DEFAULT_XML_LIMITS,
  decodeXml,
  firstInvalidUtf8,
  parseXml,
  select,
  selectOne,
  text,
  parseXmlForReading,
  withoutLongComments,
} from '../../../src/formats/xml/secure-parser';
import { runBounded } from '../../support/bounded-process';

/** Runs `fn`, expects a GatewayError, and proves by the clock that refusing did not hang. */
function refusal(fn: () => unknown): GatewayError {
  const started = Date.now();
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  const elapsed = Date.now() - started;
  expect(elapsed).toBeLessThan(10_000);
  expect(caught).toBeInstanceOf(GatewayError);
  return caught as GatewayError;
}

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

const CDATA_END_REFUSAL = "']]>' is not allowed in character data (write '>' as &gt;)";

describe('parseXml: safety refusals', () => {
  it('refuses XXE (external entity to /etc/passwd) at the DOCTYPE, before any entity is read', () => {
    const xxe = '<?xml version="1.0"?>\n<!DOCTYPE foo [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>\n<foo>&xxe;</foo>';
    const e = refusal(() => parseXml(utf8(xxe)));
    expect(e.code).toBe('UNSAFE_XML');
    expect(e.message).toMatch(/^2:1: DOCTYPE declarations are not accepted/);
    expect(e.message).not.toMatch(/root:/); // nothing from /etc/passwd
  });

  it('refuses billion laughs', () => {
    const lol =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
      Array.from({ length: 9 }, (_, k) => `<!ENTITY lol${k + 1} "${`&lol${k === 0 ? '' : k};`.repeat(10)}">`).join('') +
      ']><lolz>&lol9;</lolz>';
    const e = refusal(() => parseXml(lol));
    expect(e.code).toBe('UNSAFE_XML');
    expect(e.message).toMatch(/DOCTYPE declarations are not accepted/);
  });

  it('refuses quadratic blowup (one large entity referenced many times)', () => {
    const big = 'a'.repeat(50_000);
    const doc = `<?xml version="1.0"?><!DOCTYPE kaboom [<!ENTITY a "${big}">]><kaboom>${'&a;'.repeat(50_000)}</kaboom>`;
    const e = refusal(() => parseXml(doc));
    expect(e.code).toBe('UNSAFE_XML');
    expect(e.message).toMatch(/^1:22: DOCTYPE/);
  });

  it('refuses an external DTD', () => {
    const doc = '<?xml version="1.0"?>\n<!DOCTYPE Invoice SYSTEM "http://attacker.example/evil.dtd">\n<Invoice/>';
    const e = refusal(() => parseXml(doc));
    expect(e.code).toBe('UNSAFE_XML');
    expect(e.message).toMatch(/^2:1: DOCTYPE/);
  });

  it('refuses a DOCTYPE in lower case and entity declarations outside a DOCTYPE', () => {
    expect(refusal(() => parseXml('<!doctype a><a/>')).code).toBe('UNSAFE_XML');
    const e = refusal(() => parseXml('<a><!ENTITY x "y"></a>'));
    expect(e.code).toBe('UNSAFE_XML');
    expect(e.message).toMatch(/<!ENTITY declarations are not accepted/);
  });

  it('refuses a DOCTYPE hidden after the root element start', () => {
    const e = refusal(() => parseXml('<a>\n<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>&x;</a>'));
    expect(e.code).toBe('UNSAFE_XML');
  });

  it('refuses a deeply nested document (100k levels) at the depth limit', () => {
    const deep = '<a>'.repeat(100_000) + '</a>'.repeat(100_000);
    const e = refusal(() => parseXml(deep));
    expect(e.code).toBe('UNSAFE_XML');
    expect(e.message).toBe(`1:${256 * 3 + 1}: element nesting deeper than 256 levels`);
  });

  it('refuses a 1 MB attribute value', () => {
    const doc = `<Invoice note="${'x'.repeat(1024 * 1024)}"/>`;
    const e = refusal(() => parseXml(doc));
    expect(e.code).toBe('UNSAFE_XML');
    expect(e.message).toBe('1:16: value of attribute "note" is longer than 65536 characters');
  });

  it('refuses too many attributes on one element and too many nodes', () => {
    const attrs = Array.from({ length: 300 }, (_, k) => `a${k}="1"`).join(' ');
    expect(refusal(() => parseXml(`<r ${attrs}/>`)).message).toMatch(/has more than 256 attributes/);
    const e = refusal(() => parseXml(`<r>${'<a/>'.repeat(1000)}</r>`, { maxNodes: 500 }));
    expect(e.code).toBe('UNSAFE_XML');
    expect(e.message).toMatch(/more than 500 markup nodes/);
  });

  it('refuses too many attributes in the whole document, with a reason code and the limit', () => {
    const attrs = Array.from({ length: 100 }, (_, k) => `a${k}="1"`).join(' ');
    const element = `<e ${attrs}/>`;
    const doc = `<r>${element.repeat(30)}</r>`;
    // The 2,501st attribute is the first of the 26th element.
    const column = '<r>'.length + 25 * element.length + '<e '.length + 1;
    for (const parse of [parseXml, parseXmlForReading]) {
      const e = refusal(() => parse(doc, { maxAttributes: 2_500 }));
      expect(e.code).toBe('UNSAFE_XML');
      expect(e.message).toBe(`1:${column}: document has more than 2500 attributes`);
      expect(e.details).toEqual({ line: 1, column, reason: 'XML_TOO_MANY_ATTRIBUTES', limit: 2_500 });
    }
    const streamed = (): unknown => detectFormat(utf8(doc), { strategy: 'stream', limits: { maxAttributes: 2_500 } });
    expect(streamed).toThrow(/more than 2500 attributes/);
    expect(parseXml(doc, { maxAttributes: 3_000 }).documentElement?.childNodes.length).toBe(30);
    expect(DEFAULT_XML_LIMITS.maxAttributes).toBe(250_000);
  });

  it('names the limit each safety refusal hit', () => {
    const reason = (doc: string, limits = {}): unknown => refusal(() => parseXml(doc, limits)).details?.['reason'];
    expect(reason(`${'<a>'.repeat(300)}${'</a>'.repeat(300)}`)).toBe('XML_TOO_DEEP');
    expect(reason(`<r>${'<a/>'.repeat(10)}</r>`, { maxNodes: 5 })).toBe('XML_TOO_MANY_NODES');
    expect(reason(`<r a="1" b="2"/>`, { maxAttributesPerElement: 1 })).toBe('XML_TOO_MANY_ATTRIBUTES_PER_ELEMENT');
    expect(reason(`<r a="12345"/>`, { maxAttributeValueLength: 4 })).toBe('XML_ATTRIBUTE_TOO_LONG');
  });

  it('refuses the attribute bomb (10^6 attributes, 7.6 MB) before building anything, in a small heap', async () => {
    // 4,000 elements of 250 attributes each: under the per-element limit, four times the document limit. Building its
    // DOM took 400 MB; refused at the scan, it must fit a child process with a 96 MB heap (30 MB of it module code).
    const attrs = Array.from({ length: 250 }, (_, k) => `a${k}="1"`).join(' ');
    const bomb = utf8(`<r>${`<e ${attrs}/>`.repeat(4_000)}</r>`);
    const secureParser = path.resolve(__dirname, '../../../src/formats/xml/secure-parser.ts');
    const outcome = await runBounded(secureParser, 'parseXml', bomb, { maxHeapMb: 96 });
    expect(outcome).toEqual(expect.objectContaining({ kind: 'threw', code: 'UNSAFE_XML' }));
    if (outcome.kind !== 'threw') return;
    expect(outcome.details).toEqual(expect.objectContaining({ reason: 'XML_TOO_MANY_ATTRIBUTES', limit: 250_000 }));
    expect(outcome.peakRssGrowthBytes).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);

  it('refuses input above the size limit before decoding it', () => {
    const e = refusal(() => parseXml(Buffer.alloc(2048, 0x20), { maxBytes: 1024 }));
    expect(e.code).toBe('PAYLOAD_TOO_LARGE');
    expect(DEFAULT_XML_LIMITS.maxBytes).toBe(24 * 1024 * 1024);
  });

  it('scans a large flat document in linear time', () => {
    const doc = `<r>${'<a b="1">x &amp; y</a>\n'.repeat(200_000)}</r>`;
    const started = Date.now();
    expect(() => parseXml(doc, { maxNodes: 100 })).toThrow(/more than 100 markup nodes/);
    expect(() => detectFormat(utf8(doc), { strategy: 'stream' })).toThrow(GatewayError);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('parseXml: encodings', () => {
  const decl = (enc: string): string => `<?xml version="1.0" encoding="${enc}"?>\n`;

  it('accepts UTF-8 with and without BOM', () => {
    const body = '<a>Gr\u00fc\u00dfe \u20ac</a>';
    expect(parseXml(utf8(decl('UTF-8') + body)).documentElement?.textContent).toBe('Grüße €');
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(decl('utf-8') + body)]);
    expect(parseXml(withBom).documentElement?.textContent).toBe('Grüße €');
    expect(parseXml(utf8(body)).documentElement?.textContent).toBe('Grüße €');
  });

  it('accepts UTF-16 LE and BE with BOM', () => {
    const body = `${decl('UTF-16')}<a>caf\u00e9 \u{1F600}</a>`;
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(body, 'utf16le')]);
    expect(parseXml(le).documentElement?.textContent).toBe('café \u{1F600}');
    const beBody = Buffer.from(body, 'utf16le');
    for (let k = 0; k + 1 < beBody.length; k += 2)
      [beBody[k], beBody[k + 1]] = [beBody[k + 1] as number, beBody[k] as number];
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), beBody]);
    expect(decodeXml(be).encoding).toBe('utf-16be');
    expect(parseXml(be).documentElement?.textContent).toBe('café \u{1F600}');
  });

  it('refuses UTF-16 without BOM', () => {
    const e = refusal(() => parseXml(Buffer.from('<a>x</a>', 'utf16le')));
    expect(e.code).toBe('INVALID_XML');
    expect(e.message).toMatch(/UTF-16 text without a byte order mark/);
  });

  it('refuses non-UTF-8 bytes under a UTF-8 declaration, naming the byte offset and position', () => {
    const doc = Buffer.concat([utf8(`${decl('UTF-8')}<a>\n  caf`), Buffer.from([0xe9]), utf8('</a>')]);
    const e = refusal(() => parseXml(doc));
    expect(e.code).toBe('INVALID_XML');
    expect(e.message).toBe(
      '3:6: invalid UTF-8 byte sequence at byte offset 48 (0xE9 0x3C 0x2F 0x61); the document declares encoding ' +
        '"UTF-8"' +
        ' (was it saved as ISO-8859-1 or Windows-1252 without declaring that?)',
    );
  });

  it('refuses invalid UTF-8 without a declaration and says why UTF-8 applies', () => {
    const e = refusal(() => parseXml(Buffer.from([0x3c, 0x61, 0x3e, 0xc0, 0xaf, 0x3c, 0x2f, 0x61, 0x3e])));
    expect(e.message).toMatch(
      /^1:4: invalid UTF-8 byte sequence at byte offset 3 .*no encoding declaration, so it must be UTF-8/,
    );
  });

  it('decodes a declared ISO-8859-1 document faithfully, and refuses bytes a declared US-ASCII does not honour', () => {
    const latin = Buffer.concat([utf8(`${decl('ISO-8859-1')}<a>caf`), Buffer.from([0xe9, 0x80]), utf8('</a>')]);
    expect(parseXml(latin).documentElement?.textContent).toBe('café\u0080');
    const ascii = Buffer.concat([utf8(`${decl('US-ASCII')}<a>caf`), Buffer.from([0xe9]), utf8('</a>')]);
    const e = refusal(() => parseXml(ascii));
    expect(e.message).toMatch(/declares encoding "US-ASCII" but byte 0xE9 at byte offset 48 is not ASCII/);
  });

  it('refuses a declared multi-byte encoding the bytes do not honour, and unknown encodings', () => {
    const sjis = Buffer.concat([utf8(`${decl('Shift_JIS')}<a>`), Buffer.from([0x82]), utf8('</a>')]);
    expect(refusal(() => parseXml(sjis)).message).toMatch(/the bytes are not valid "Shift_JIS"/);
    expect(refusal(() => parseXml(utf8(`${decl('X-NOT-AN-ENCODING')}<a/>`))).message).toMatch(
      /unsupported encoding "X-NOT-AN-ENCODING"/,
    );
  });

  it('refuses a BOM that contradicts the declared encoding', () => {
    const doc = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(`${decl('ISO-8859-1')}<a/>`)]);
    expect(refusal(() => parseXml(doc)).message).toMatch(/UTF-8 byte order mark but declares encoding "ISO-8859-1"/);
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${decl('UTF-8')}<a/>`, 'utf16le')]);
    expect(refusal(() => parseXml(le)).message).toMatch(/UTF-16LE byte order mark but declares encoding "UTF-8"/);
  });

  it('refuses characters that are not XML 1.0 characters, literal or referenced', () => {
    expect(refusal(() => parseXml('<a>\u0001</a>')).message).toBe('1:4: character U+0001 is not allowed in XML 1.0');
    expect(refusal(() => parseXml('<a>&#0;</a>')).message).toBe(
      '1:4: character reference "&#0;" is not a legal XML character',
    );
  });

  it('finds the first invalid UTF-8 sequence with the WHATWG rules', () => {
    expect(firstInvalidUtf8(Buffer.from('héllo'))).toBe(-1);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xed, 0xa0, 0x80]))).toBe(1); // encoded surrogate
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xf0, 0x9f, 0x98]))).toBe(1); // truncated 4-byte sequence
  });
});

describe('parseXml: malformed and non-XML input', () => {
  it.each<[string, string | Buffer, string]>([
    ['empty body', Buffer.alloc(0), '1:1: empty document (0 bytes)'],
    ['whitespace only', '  \n ', '2:2: empty document'],
    [
      'truncated document',
      '<Invoice><ID>1</ID><Note>tex',
      '1:29: unexpected end of document: 2 element(s) not closed, innermost <Note>, <Invoice> (document truncated?)',
    ],
    [
      'truncated inside a tag',
      '<Invoice><ID schemeID="0',
      '1:23: unterminated value of attribute "schemeID" (document truncated?)',
    ],
    ['JSON', '{"invoice": {"id": 1}}', "1:1: content is not XML: expected '<' but found '{' (this looks like JSON)"],
    [
      'PNG header',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      '1:1: input is a PNG image, not XML',
    ],
    ['a PDF', Buffer.from('%PDF-1.7\n%âãÏÓ\n', 'latin1'), '1:1: input is a PDF document, not XML'],
    ['mismatched tags', '<a>\n  <b></c></a>', '2:6: end tag </c> does not match start tag <b> opened at 2:3'],
    ['two roots', '<a/><b/>', '1:5: a second root element follows the end of the root element'],
    ['text after the root', '<a/>trailing', '1:5: text after the end of the root element'],
    [
      'undefined entity',
      '<a>&nbsp;</a>',
      '1:4: malformed or undefined entity reference "&nbsp;" (only the five predefined entities and character ' +
        'references are allowed)',
    ],
    [
      'bare ampersand',
      '<a>fish & chips</a>',
      '1:9: malformed or undefined entity reference "&" (only the five predefined entities and character references ' +
        'are allowed)',
    ],
    ['unquoted attribute', '<a x=1/>', '1:6: value of attribute "x" must be quoted'],
    ['unbound element prefix', '<a>\n<p:b/></a>', '2:1: namespace prefix "p" of element <p:b> is not declared'],
    ['unbound attribute prefix', '<a q:x="1"/>', '1:1: namespace prefix "q" of attribute "q:x" is not declared'],
    ['duplicate attribute', '<a x="1" x="2"/>', '1:10: attribute "x" appears more than once in start tag <a>'],
    [
      'misplaced XML declaration',
      '<a><?xml version="1.0"?></a>',
      '1:4: XML declaration is only allowed at the very start of the document',
    ],
    ['XML 1.1', '<?xml version="1.1"?><a/>', '1:1: XML version "1.1" is not supported (only 1.0)'],
    [']]> in character data', '<a>x ]]> y</a>', `1:6: ${CDATA_END_REFUSAL}`],
    [']]> after CDATA', '<a><![CDATA[<b>]]>]]></a>', `1:19: ${CDATA_END_REFUSAL}`],
  ])('%s → INVALID_XML with position', (_name, input, message) => {
    const e = refusal(() => parseXml(input));
    expect(e.code).toBe('INVALID_XML');
    expect(e.message).toBe(message);
    expect(e.details).toEqual(expect.objectContaining({ line: expect.any(Number), column: expect.any(Number) }));
  });

  it("refuses ']]>' in character data on every path, and takes it where it may stand", () => {
    const doc = `<a>${'x]] ]> &amp;'.repeat(10_000)}\n<b>]]&gt;</b>]]></a>`;
    for (const parse of [parseXml, parseXmlForReading]) {
      expect(refusal(() => parse(doc)).message).toMatch(/^2:14: ']]>' is not allowed/);
    }
    expect(refusal(() => detectFormat(utf8(doc), { strategy: 'stream' })).code).toBe('INVALID_XML');
    const fine = '<a x="]]>"><!-- ]]> --><![CDATA[ ]] ]]><?pi ]]>?>]]&gt;]]</a>';
    expect(parseXml(fine).documentElement?.textContent).toBe(' ]] ]]>]]');
    expect(parseXmlForReading(fine).documentElement?.textContent).toBe(' ]] ]]>]]');
  });

  it('tolerates processing instructions and comments around the root, and keeps a literal U+FFFD', () => {
    const doc = parseXml(
      '<?xml version="1.0"?>\n<?xml-stylesheet href="x.xsl"?>\n<!-- c --><a><?pi data?>\ufffd</a><!-- end -->',
    );
    expect(doc.documentElement?.localName).toBe('a');
    expect(doc.documentElement?.textContent).toBe('\ufffd');
  });
});

describe('namespace-aware XPath helpers', () => {
  // The document uses prefixes of its own; the queries bind theirs through the map.
  const doc = parseXml(
    '<x:Invoice xmlns:x="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" ' +
      'xmlns:b="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">' +
      '<b:CustomizationID> urn:cen.eu:en16931:2017 ' +
      '</b:CustomizationID><b:Note>one</b:Note><b:Note>two</b:Note></x:Invoice>',
  );

  it('selects with the caller’s prefixes, never the document’s', () => {
    expect(text(doc, '/inv:Invoice/cbc:CustomizationID', UBL_NS)).toBe('urn:cen.eu:en16931:2017');
    expect(select(doc, '//cbc:Note', UBL_NS).map((n) => n.textContent)).toEqual(['one', 'two']);
    expect(() => select(doc, '//b:Note', UBL_NS)).toThrow(/XPath prefix "b" is not bound/);
  });

  it('binds variables instead of splicing values into expressions', () => {
    expect(selectOne(doc, '//cbc:Note[. = $v]', UBL_NS, { v: "two' or '1'='1" })).toBeUndefined();
    expect(selectOne(doc, '//cbc:Note[. = $v]', UBL_NS, { v: 'two' })?.textContent).toBe('two');
  });

  it('returns string values for non-node expressions and undefined for an empty selection', () => {
    expect(text(doc, 'count(//cbc:Note)', UBL_NS)).toBe('2');
    expect(text(doc, '//cbc:Missing', UBL_NS)).toBeUndefined();
    expect(() => select(doc, 'count(//cbc:Note)', UBL_NS)).toThrow(TypeError);
    expect(NS.cbc).toBe(UBL_NS.cbc);
  });

  it('evaluates unprefixed names as no-namespace names', () => {
    const plain = parseXml('<root><item>1</item></root>');
    expect(text(plain, '/root/item')).toBe('1');
  });
});

describe('parseXml: very long comments', () => {
  const big = (n: number) => 'c'.repeat(n);

  it('parses a document with a 20 MB comment (xmldom alone overflows its stack on it)', () => {
    const xml = `<?xml version="1.0"?>\n<!--${big(20 * 1024 * 1024)}\nsecond line-->\n<root><a>1</a></root>`;
    const doc = parseXml(xml, { maxBytes: 24 * 1024 * 1024 });
    expect(text(doc, '/root/a')).toBe('1');
    // Line numbers after the comment are unchanged: schema errors are mapped back to elements by line.
    const root = selectOne(doc, '/root') as unknown as { lineNumber: number };
    expect(root.lineNumber).toBe(4);
  });

  it('keeps short comments and never touches comment-like text in CDATA or processing instructions', () => {
    const long = big(70 * 1024);
    const xml = `<r><![CDATA[<!--${long}-->]]><?pi <!--${long}--> ?><!--short--><!--${long}--></r>`;
    const out = withoutLongComments(xml);
    expect(out).toBe(`<r><![CDATA[<!--${long}-->]]><?pi <!--${long}--> ?><!--short--><!----></r>`);
    const doc = parseXml(xml);
    expect(doc.documentElement!.firstChild!.nodeValue).toBe(`<!--${long}-->`);
  });

  it('still refuses a malformed long comment (the scanner checks it before anything is emptied)', () => {
    const e = refusal(() => parseXml(`<r><!--${big(70 * 1024)}--x--></r>`));
    expect(e.code).toBe('INVALID_XML');
  });
});
