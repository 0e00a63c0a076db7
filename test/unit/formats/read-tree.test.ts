import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import {
  factsFromDocument,
  parseXml,
  parseXmlForReading,
  type ReadDocument,
  type ReadElement,
  type ReadNode,
} from '../../../src/formats';
import { CORPUS_DIR } from '../../support/corpus';

/**
 * The light read tree (parseXmlForReading) against xmldom (parseXml): every property the readers and detection use,
 * compared node by node, on crafted edge cases and on every XML file of the corpus.
 */

/** True for an xmldom Document, i.e. parseXmlForReading fell back to xmldom. */
const isXmldom = (doc: ReadDocument): boolean =>
  typeof (doc as unknown as { createElement?: unknown }).createElement === 'function';

/** What the readers and detection can observe of one node, as a string (children compared separately). */
function describe1(n: ReadNode): string {
  if (n.nodeType !== 1)
    return JSON.stringify([n.nodeType, n.nodeName, (n as unknown as { data: string }).data, n.textContent]);
  const e = n as ReadElement;
  const attrs: Array<[string, string, string | null]> = [];
  for (let k = 0; k < e.attributes.length; k++) {
    const a = e.attributes.item(k);
    if (a) attrs.push([a.name, a.value, a.namespaceURI]);
  }
  const names = [...attrs.map((a) => a[0]), 'currencyID', 'schemeID', 'nope'];
  const lookups = names.flatMap((nm) => [
    e.getAttribute(nm),
    e.hasAttribute(nm),
    e.getAttributeNode(nm)?.value ?? null,
  ]);
  // textContent of leaves (every value a reader takes); of the rest only the length, to keep the walk linear.
  const hasElementChild = ((): boolean => {
    for (let c = e.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) return true;
    return false;
  })();
  const text = hasElementChild ? (e.textContent ?? '').length : e.textContent;
  return JSON.stringify([
    1,
    e.nodeName,
    e.localName,
    e.namespaceURI,
    text,
    attrs,
    lookups,
    e.attributes.item(e.attributes.length),
  ]);
}

/**
 * Walks both trees in step and returns the first difference (a path and both descriptions), or undefined; also checks
 * the tree's own links (parentNode, previousSibling, lastChild) are consistent.
 */
function firstDifference(a: ReadDocument, b: ReadDocument): string | undefined {
  const ra = a.documentElement;
  const rb = b.documentElement;
  if (!ra || !rb) return 'no root';
  if (ra.parentNode?.nodeType !== 9 || rb.parentNode?.nodeType !== 9) return 'root parent is not the document';
  const stack: Array<[ReadNode, ReadNode, string]> = [[ra, rb, '']];
  while (stack.length > 0) {
    const [x, y, at] = stack.pop() as [ReadNode, ReadNode, string];
    const here = `${at}/${x.nodeName}`;
    const dx = describe1(x);
    const dy = describe1(y);
    if (dx !== dy) return `${here}: ${dx} != ${dy}`;
    let cx = x.firstChild;
    let cy = y.firstChild;
    let prev: ReadNode | null = null;
    while (cx || cy) {
      if (!cx || !cy) return `${here}: child count differs`;
      if (cx.parentNode !== x || cx.previousSibling !== prev) return `${here}: broken links`;
      stack.push([cx, cy, here]);
      prev = cx;
      cx = cx.nextSibling;
      cy = cy.nextSibling;
    }
    if (x.lastChild !== prev) return `${here}: lastChild`;
  }
  return undefined;
}

function byName(list: { length: number; item(k: number): ReadElement | null }): string[] {
  const out: string[] = [];
  for (let k = 0; k < list.length; k++) out.push(list.item(k)?.nodeName ?? '?');
  return out;
}

function expectSameTree(xml: string | Buffer): ReadDocument {
  const dom: ReadDocument = parseXml(xml);
  const tree = parseXmlForReading(xml);
  expect(firstDifference(tree, dom)).toBeUndefined();
  // Detection reads the namespace declarations the tree collected while it was built; xmldom's are found by a walk.
  expect(factsFromDocument(tree)).toEqual(factsFromDocument(dom));
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
      '<r:Root xmlns:r="urn:r" xmlns="urn:d" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
      'xsi:schemaLocation="urn:r r.xsd" a="x&#13;y&#10;z\r\nw\tv" xml:lang="de">\r\n' +
      '  <Amount currencyID="EUR" r:extra=\'1\'>12.50</Amount>\r\n' +
      '  <Empty/><EmptyCdata><![CDATA[]]></EmptyCdata><OnlyComment><!-- c --></OnlyComment><OnlyPi><?target data ' +
      '?></OnlyPi>\r\n' +
      '  <Mixed>a &amp; b<!-- c -->c<![CDATA[<d>\r\ne]]>f&#13;g\r\nh\ri<Inner>j</Inner>k</Mixed>\r\n' +
      '  <Plain xmlns="">no namespace<Child>still none</Child></Plain>\r\n' +
      '  <r:Same>1</r:Same><r:Same>2</r:Same>\r\n' +
      '</r:Root>\r\n<!-- after -->\r\n';
    const tree = expectSameTree(xml);
    expect(isXmldom(tree)).toBe(false);
    const dom = parseXml(xml);
    expect(byName(tree.getElementsByTagNameNS('urn:r', 'Same'))).toEqual(
      byName(dom.getElementsByTagNameNS('urn:r', 'Same')),
    );
    expect(byName(tree.getElementsByTagNameNS('urn:r', 'Root'))).toEqual(['r:Root']);
    const root = tree.documentElement as ReadElement;
    const domRoot = dom.documentElement as ReadElement;
    for (const q of ['Amount', 'Child', 'r:Same', 'Same', '*'])
      expect(byName(root.getElementsByTagName(q))).toEqual(byName(domRoot.getElementsByTagName(q)));
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
    const differences: string[] = [];
    for (const file of files) {
      const body = readFileSync(file);
      const domError = errorOf(() => parseXml(body));
      if (domError !== 'no error') {
        expect([file, errorOf(() => parseXmlForReading(body))]).toEqual([file, domError]);
        refusedBoth++;
        continue;
      }
      const tree = parseXmlForReading(body);
      if (!isXmldom(tree)) light++;
      const dom = parseXml(body);
      const diff = firstDifference(tree, dom);
      if (diff !== undefined) differences.push(`${file}: ${diff}`);
      else if (JSON.stringify(factsFromDocument(tree)) !== JSON.stringify(factsFromDocument(dom)))
        differences.push(`${file}: detection facts differ`);
    }
    expect(differences).toEqual([]);
    // Nearly all real documents take the light tree; the few left to xmldom are odd on purpose (or refused).
    expect(light).toBeGreaterThan(files.length - refusedBoth - 10);
  });

  it.each([
    ['a comment with "--"', '<a><!-- x -- y --></a>'],
    ['a comment ending in "-"', '<a><!-- x ---></a>'],
    ['a non-ASCII element name', '<a><caf\u00e9>1</caf\u00e9></a>'],
    ['an element name with two colons', '<a xmlns:b="urn:b"><b:c:d/></a>'],
    ['a digit after the prefix', '<a xmlns:b="urn:b"><b:1c/></a>'],
    ['an element name ending in a colon', '<a xmlns:b="urn:b"><b:/></a>'],
    ['an element name starting with a colon', '<a><:b/></a>'],
    ['a "$" in an element name', '<a><b$c/></a>'],
    ['a rebound xml prefix', '<a xmlns:xml="urn:other"/>'],
    ['a prefix bound to the xmlns namespace', '<a xmlns:p="http://www.w3.org/2000/xmlns/"/>'],
    ['two attributes with one expanded name', '<a xmlns:p="urn:x" xmlns:q="urn:x" p:v="1" q:v="2"/>'],
    ['a processing instruction with an odd target', '<a><?t\u00e9 x?></a>'],
  ])('leaves %s to xmldom: same result or same error', (_what, xml) => {
    const domError = errorOf(() => parseXml(xml));
    expect(errorOf(() => parseXmlForReading(xml))).toEqual(domError);
    if (domError === 'no error') expectSameTree(xml);
  });

  it('takes ASCII names with underscores, dots, hyphens and digits on the light tree', () => {
    expect(isXmldom(expectSameTree('<_a xmlns:_p="urn:p"><_p:b.c-d9 x_y.z-1="1"/><e9.-_/></_a>'))).toBe(false);
  });

  it('resolves prefixes through nested, shadowing and self-closing declarations as xmldom does', () => {
    const xml =
      '<a xmlns:p="urn:1" xmlns="urn:d"><p:b xmlns:p="urn:2"><p:c/><c xmlns=""/></p:b><p:d/>' +
      '<e xmlns:q="urn:3" q:x="1"/><f xmlns:q="urn:4"><q:g q:y="2"/></f><p:h xmlns:r="urn:5"></p:h></a>';
    const tree = expectSameTree(xml);
    expect(isXmldom(tree)).toBe(false);
    expect(factsFromDocument(tree).declaredNamespaces).toEqual(['urn:1', 'urn:2', 'urn:3', 'urn:4', 'urn:5', 'urn:d']);
    // A declaration on a self-closing element ends with it; so does one on an element with content.
    for (const xml2 of [
      '<a><e xmlns:q="urn:3"/><q:f/></a>',
      '<a><e xmlns:q="urn:3"></e><q:f/></a>',
      '<a><e xmlns:q="urn:3"><g/></e><g q:x="1"/></a>',
    ]) {
      const domError = errorOf(() => parseXml(xml2));
      expect(domError).not.toBe('no error');
      expect(errorOf(() => parseXmlForReading(xml2))).toEqual(domError);
    }
  });

  it(
    'takes text beyond the Basic Multilingual Plane on the light tree and refuses illegal characters as parseXml ' +
      'does',
    () => {
      expect(isXmldom(expectSameTree('<a b="\u{1F600}">x\u{1F4B6}y</a>'))).toBe(false);
      for (const bad of [
        '<a>\u0001</a>',
        '<a>\uD800x</a>',
        '<a>x\uDC00</a>',
        '<a b="\uFFFE"/>',
        '<a>\u2028\u0002</a>',
      ]) {
        const domError = errorOf(() => parseXml(bad));
        expect(domError).not.toBe('no error');
        expect(errorOf(() => parseXmlForReading(bad))).toEqual(domError);
      }
    },
  );

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
