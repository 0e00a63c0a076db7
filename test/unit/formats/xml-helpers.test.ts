import { DOMParser } from '@xmldom/xmldom';
import {
  childElements,
  childElementsNamed,
  escapeAttr,
  escapeText,
  escapeXml,
  escapeXmlKeepingCr,
  firstChildElement,
  isElement,
} from '../../../src/formats/xml/helpers';
import { parseXmlForReading } from '../../../src/formats/xml/secure-parser';

describe('XML helpers: escaping', () => {
  const nasty = 'a & b < c > d " e \r f \t g \n h \'';

  it('escapeXml escapes the four markup characters and nothing else', () => {
    expect(escapeXml(nasty)).toBe("a &amp; b &lt; c &gt; d &quot; e \r f \t g \n h '");
  });

  it('escapeXmlKeepingCr also keeps carriage returns', () => {
    expect(escapeXmlKeepingCr(nasty)).toBe("a &amp; b &lt; c &gt; d &quot; e &#13; f \t g \n h '");
  });

  it('escapeText escapes text content as canonical XML does (quotes stay)', () => {
    expect(escapeText(nasty)).toBe('a &amp; b &lt; c &gt; d " e &#13; f \t g \n h \'');
    const plain = '1234.50';
    expect(escapeText(plain)).toBe(plain);
  });

  it('escapeAttr escapes quotes and the whitespace attribute parsing would normalise', () => {
    expect(escapeAttr(nasty)).toBe("a &amp; b &lt; c &gt; d &quot; e &#13; f &#9; g &#10; h '");
    expect(escapeAttr('EUR')).toBe('EUR');
  });

  it('escaped values read back as the original value', () => {
    const value = 'x & <y> "z"\r\n\tw';
    const doc = new DOMParser().parseFromString(`<r a="${escapeAttr(value)}">${escapeText(value)}</r>`, 'text/xml');
    expect(doc.documentElement!.getAttribute('a')).toBe(value);
    expect(doc.documentElement!.textContent).toBe(value);
  });
});

describe('XML helpers: element walking', () => {
  const xml = '<r xmlns="urn:a" xmlns:b="urn:b">text<x>1</x><!-- c --><b:x>2</b:x><y/><x>3</x><?pi data?></r>';

  it('walks an xmldom DOM by namespace and local name', () => {
    const root = new DOMParser().parseFromString(xml, 'text/xml').documentElement!;
    expect(childElements(root).map((e) => e.localName)).toEqual(['x', 'x', 'y', 'x']);
    expect(childElementsNamed(root, 'urn:a', 'x').map((e) => e.textContent)).toEqual(['1', '3']);
    expect(firstChildElement(root, 'urn:b', 'x')?.textContent).toBe('2');
    expect(firstChildElement(root, 'urn:b', 'y')).toBeUndefined();
    expect(firstChildElement(undefined, 'urn:a', 'x')).toBeUndefined();
    expect(isElement(root.firstChild)).toBe(false);
    expect(isElement(root.firstChild!.nextSibling)).toBe(true);
    expect(isElement(null)).toBe(false);
  });

  it('walks the read tree the same way', () => {
    const doc = parseXmlForReading(Buffer.from(xml));
    expect(childElements(doc.documentElement!).map((e) => `${e.namespaceURI} ${e.localName}`)).toEqual([
      'urn:a x',
      'urn:b x',
      'urn:a y',
      'urn:a x',
    ]);
  });
});
