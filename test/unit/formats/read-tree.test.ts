import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { parseXml, parseXmlForReading, type ReadDocument, type ReadElement, type ReadNode } from '../../../src/formats';
import { CORPUS_DIR } from '../../support/corpus';

/**
 * The light read tree (parseXmlForReading) against xmldom (parseXml): every property the readers and detection use,
 * compared node by node, on crafted edge cases and on every XML file of the corpus.
 */

/** True for an xmldom Document, i.e. parseXmlForReading fell back to xmldom. */
const isXmldom = (doc: ReadDocument): boolean => typeof (doc as unknown as { createElement?: unknown }).createElement === 'function';

interface Flat {
  type: number;
  name: string;
  local?: string | null;
  ns?: string | null;
  data?: string;
  text?: string | null;
  attrs?: Array<[string, string, string | null]>;
  lookups?: Array<string | null | boolean>;
}

/** Depth-first list of what the readers can observe of each node below (and including) the root element. */
function flatten(doc: ReadDocument): Flat[] {
  const out: Flat[] = [];
  const root = doc.documentElement;
  if (!root) throw new Error('no root');
  expect(root.parentNode?.nodeType).toBe(9);
  const visit = (n: ReadNode, parent: ReadNode): void => {
    expect(n.parentNode).toBe(parent);
    if (n.nodeType === 1) {
      const e = n as ReadElement;
      const attrs: Array<[string, string, string | null]> = [];
      for (let k = 0; k < e.attributes.length; k++) {
        const a = e.attributes.item(k);
        if (a) attrs.push([a.name, a.value, a.namespaceURI]);
      }
      expect(e.attributes.item(e.attributes.length)).toBeNull();
      const names = [...attrs.map((a) => a[0]), 'currencyID', 'schemeID', 'nope'];
      const lookups = names.flatMap((nm) => [e.getAttribute(nm), e.hasAttribute(nm), e.getAttributeNode(nm)?.value ?? null]);
      out.push({ type: 1, name: e.nodeName, local: e.localName, ns: e.namespaceURI, text: e.textContent, attrs, lookups });
      let prev: ReadNode | null = null;
      for (let c = e.firstChild; c; c = c.nextSibling) {
        expect(c.previousSibling).toBe(prev);
        visit(c, e);
        prev = c;
      }
      expect(e.lastChild).toBe(prev);
      out.push({ type: -1, name: e.nodeName });
    } else {
      out.push({ type: n.nodeType, name: n.nodeName, data: (n as unknown as { data: string }).data, text: n.textContent });
      expect(n.firstChild).toBeNull();
    }
  };
  visit(root, root.parentNode as ReadNode);
  return out;
}

function byName(list: { length: number; item(k: number): ReadElement | null }): string[] {
  const out: string[] = [];
  for (let k = 0; k < list.length; k++) out.push(list.item(k)?.nodeName ?? '?');
  return out;
}

function expectSameTree(xml: string | Buffer): ReadDocument {
  const dom = parseXml(xml) as unknown as ReadDocument;
  const tree = parseXmlForReading(xml);
  expect(flatten(tree)).toEqual(flatten(dom));
  return tree;
}

function errorOf(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    if (e instanceof GatewayError) return { code: e.code, status: e.status, message: e.message, details: e.details };
    return { other: String(e) };
  }
  return 'no error';
}

describe('parseXmlForReading: the light tree', () => {
  it('matches xmldom on namespaces, attributes, text, CDATA, comments, processing instructions and line ends', () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?>\r\n<!-- before -->\r\n<?pi before?>\r\n' +
      '<r:Root xmlns:r="urn:r" xmlns="urn:d" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="urn:r r.xsd" a="x&#13;y&#10;z\r\nw\tv" xml:lang="de">\r\n' +
      '  <Amount currencyID="EUR" r:extra=\'1\'>12.50</Amount>\r\n' +
      '  <Empty/><EmptyCdata><![CDATA[]]></EmptyCdata><OnlyComment><!-- c --></OnlyComment><OnlyPi><?target data ?></OnlyPi>\r\n' +
      '  <Mixed>a &amp; b<!-- c -->c<![CDATA[<d>\r\ne]]>f&#13;g\r\nh\ri<Inner>j</Inner>k</Mixed>\r\n' +
      '  <Plain xmlns="">no namespace<Child>still none</Child></Plain>\r\n' +
      '  <r:Same>1</r:Same><r:Same>2</r:Same>\r\n' +
      '</r:Root>\r\n<!-- after -->\r\n';
    const tree = expectSameTree(xml);
    expect(isXmldom(tree)).toBe(false);
    const dom = parseXml(xml);
    expect(byName(tree.getElementsByTagNameNS('urn:r', 'Same'))).toEqual(byName(dom.getElementsByTagNameNS('urn:r', 'Same')));
    expect(byName(tree.getElementsByTagNameNS('urn:r', 'Root'))).toEqual(['r:Root']);
    const root = tree.documentElement as ReadElement;
    const domRoot = dom.documentElement as unknown as ReadElement;
    for (const q of ['Amount', 'Child', 'r:Same', 'Same', '*']) expect(byName(root.getElementsByTagName(q))).toEqual(byName(domRoot.getElementsByTagName(q)));
  });

  it('reads every XML file of the corpus exactly as xmldom does', () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const p = path.join(dir, f);
        return statSync(p).isDirectory() ? walk(p) : /\.xml$/i.test(f) ? [p] : [];
      });
    const files = walk(CORPUS_DIR);
    expect(files.length).toBeGreaterThan(500);
    let light = 0;
    let refusedBoth = 0;
    for (const file of files) {
      const body = require('node:fs').readFileSync(file) as Buffer;
      const domError = errorOf(() => parseXml(body));
      if (domError !== 'no error') {
        expect([file, errorOf(() => parseXmlForReading(body))]).toEqual([file, domError]);
        refusedBoth++;
        continue;
      }
      const tree = parseXmlForReading(body);
      if (!isXmldom(tree)) light++;
      expect([file, flatten(tree)]).toEqual([file, flatten(parseXml(body) as unknown as ReadDocument)]);
    }
    // Nearly all real documents take the light tree; the few left to xmldom are odd on purpose (or refused).
    expect(light).toBeGreaterThan(files.length - refusedBoth - 10);
  });

  it.each([
    ['a comment with "--"', '<a><!-- x -- y --></a>'],
    ['a comment ending in "-"', '<a><!-- x ---></a>'],
    ['a non-ASCII element name', '<a><caf\u00e9>1</caf\u00e9></a>'],
    ['an element name with two colons', '<a xmlns:b="urn:b"><b:c:d/></a>'],
    ['a rebound xml prefix', '<a xmlns:xml="urn:other"/>'],
    ['a prefix bound to the xmlns namespace', '<a xmlns:p="http://www.w3.org/2000/xmlns/"/>'],
    ['two attributes with one expanded name', '<a xmlns:p="urn:x" xmlns:q="urn:x" p:v="1" q:v="2"/>'],
    ['a processing instruction with an odd target', '<a><?t\u00e9 x?></a>'],
  ])('leaves %s to xmldom: same result or same error', (_what, xml) => {
    const domError = errorOf(() => parseXml(xml));
    expect(errorOf(() => parseXmlForReading(xml))).toEqual(domError);
    if (domError === 'no error') expectSameTree(xml);
  });

  it('leaves U+2028 line ends to xmldom, which turns them into line feeds', () => {
    const xml = '<a b="1\u20282">x\u2029y\u0085z</a>';
    const tree = expectSameTree(xml);
    expect(isXmldom(tree)).toBe(true);
    expect(tree.documentElement?.textContent).toBe('x\ny\nz');
  });

  it.each([
    ['DOCTYPE', '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>'],
    ['truncated', '<a><b>1</b>'],
    ['undeclared prefix', '<p:a/>'],
    ['undefined entity', '<a>&nbsp;</a>'],
    ['text after the root', '<a/>x'],
    ['bad encoding', Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0x3c, 0x2f, 0x61, 0x3e])],
  ])('refuses %s with the same error as parseXml', (_what, xml) => {
    const domError = errorOf(() => parseXml(xml));
    expect(domError).not.toBe('no error');
    expect(errorOf(() => parseXmlForReading(xml))).toEqual(domError);
  });
});
