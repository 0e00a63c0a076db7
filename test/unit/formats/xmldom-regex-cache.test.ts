import { XMLSerializer } from '@xmldom/xmldom';
import { GatewayError } from '../../../src/core/gateway-error';
import { parseXml } from '../../../src/formats/xml/secure-parser';
import { installXmldomRegexCache } from '../../../src/formats/xml/xmldom-regex-cache';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const grammar = require('@xmldom/xmldom/lib/grammar') as {
  reg: (...parts: Array<RegExp | string>) => RegExp;
  QName_group: RegExp;
  S_OPT: RegExp;
};

describe('xmldom regex cache', () => {
  const original = installXmldomRegexCache();

  it('is installed by the secure parser and keeps the original', () => {
    expect(typeof original).toBe('function');
    expect(grammar.reg).not.toBe(original);
    // Installing twice wraps once.
    expect(installXmldomRegexCache()).toBe(original);
  });

  it('returns one compiled instance per combination, equal to what xmldom would build', () => {
    const a = grammar.reg('^', grammar.QName_group, grammar.S_OPT, '$');
    const b = grammar.reg('^', grammar.QName_group, grammar.S_OPT, '$');
    expect(a).toBe(b);
    const fresh = original!.call(grammar, '^', grammar.QName_group, grammar.S_OPT, '$');
    expect(a.source).toBe(fresh.source);
    expect(a.flags).toBe(fresh.flags);
    expect(a.global || a.sticky).toBe(false);
    // A different combination is a different expression.
    expect(grammar.reg('^', grammar.QName_group)).not.toBe(a);
    expect(grammar.reg('^', grammar.QName_group).source).toBe(original!.call(grammar, '^', grammar.QName_group).source);
  });

  it('keeps the shared expression stateless across parses (same DOM every time)', () => {
    const xml = '<r xmlns="urn:x" xmlns:p="urn:p"><p:a>1</p:a ><b x="1"><c/></b>\n<p:a>2</p:a></r>';
    const first = new XMLSerializer().serializeToString(parseXml(xml));
    for (let k = 0; k < 5; k++) expect(new XMLSerializer().serializeToString(parseXml(xml))).toBe(first);
    expect(first).toBe('<r xmlns="urn:x" xmlns:p="urn:p"><p:a>1</p:a><b x="1"><c/></b>\n<p:a>2</p:a></r>');
  });

  it('still refuses malformed end tags', () => {
    for (const bad of ['<r><a></a b></r>', '<r><a></a\nx></r>', '<r></r x="1">']) {
      let caught: unknown;
      try {
        parseXml(bad);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(GatewayError);
      expect((caught as GatewayError).code).toBe('INVALID_XML');
    }
  });
});
