/**
 * XML canonicalization for signatures, on top of xml-crypto's implementations with one correction: xml-crypto sorts
 * namespace declarations with `localeCompare`, which puts `eb` before `S12`; Canonical XML orders them by code point
 * (`S12` before `eb`), as Java's implementations do. phase4 signs with the prefix S12 next to eb and wsu, so without
 * the correction no phase4 signature verifies and no signature of ours verifies at phase4. Attributes are ordered by
 * namespace URI, then local name, also by code point.
 *
 * `excC14n` canonicalizes an element in its document context: the namespace declarations in scope from ancestors are
 * passed in, so prefixes named in an InclusiveNamespaces PrefixList (phase4 "S12", others "eb3 soapenv xsd xsi")
 * are rendered as the signer rendered them. The element is cloned, because the canonicalizer writes those
 * declarations onto the node it is given.
 */
import type { Element, Node } from '@xmldom/xmldom';
import { C14nCanonicalization, ExclusiveCanonicalization, type SignedXml } from 'xml-crypto';

const XMLNS = 'http://www.w3.org/2000/xmlns/';

interface NamedNs {
  prefix: string;
}
interface NamedAttr {
  namespaceURI: string | null;
  localName: string;
}

function codePointCompare(a: string, b: string): -1 | 0 | 1 {
  return a === b ? 0 : a < b ? -1 : 1;
}

function attrOrder(a: NamedAttr, b: NamedAttr): -1 | 0 | 1 {
  if (!a.namespaceURI && b.namespaceURI) return -1;
  if (!b.namespaceURI && a.namespaceURI) return 1;
  return codePointCompare(a.namespaceURI ?? '', b.namespaceURI ?? '') || codePointCompare(a.localName, b.localName);
}

export class ExclusiveC14n extends ExclusiveCanonicalization {
  override nsCompare(a: NamedNs, b: NamedNs): number {
    return codePointCompare(a.prefix, b.prefix);
  }
  override attrCompare(a: NamedAttr, b: NamedAttr): 1 | 0 | -1 {
    return attrOrder(a, b);
  }
}

export class InclusiveC14n extends C14nCanonicalization {
  override nsCompare(a: NamedNs, b: NamedNs): number {
    return codePointCompare(a.prefix, b.prefix);
  }
  override attrCompare(a: NamedAttr, b: NamedAttr): 1 | 0 | -1 {
    return attrOrder(a, b);
  }
}

/** Makes a SignedXml instance canonicalize with the corrected ordering. */
export function useCorrectC14n(sig: SignedXml): SignedXml {
  const algs = sig.CanonicalizationAlgorithms as Record<string, unknown>;
  algs['http://www.w3.org/2001/10/xml-exc-c14n#'] = ExclusiveC14n;
  algs['http://www.w3.org/TR/2001/REC-xml-c14n-20010315'] = InclusiveC14n;
  return sig;
}

/** Namespace declarations in scope at `node`'s parent, nearest first wins. */
export function ancestorNamespaces(node: Node): Array<{ prefix: string; namespaceURI: string }> {
  const seen = new Map<string, string>();
  for (let p = node.parentNode; p && p.nodeType === 1; p = p.parentNode) {
    const attrs = (p as Element).attributes;
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs.item(i);
      if (!a || a.namespaceURI !== XMLNS) continue;
      const prefix = a.prefix === 'xmlns' ? (a.localName ?? '') : '';
      if (prefix && !seen.has(prefix)) seen.set(prefix, a.value);
    }
  }
  return [...seen].map(([prefix, namespaceURI]) => ({ prefix, namespaceURI }));
}

export function excC14n(element: Element, inclusivePrefixes: readonly string[] = []): string {
  const clone = element.cloneNode(true);
  return new ExclusiveC14n().process(clone as unknown as Parameters<ExclusiveCanonicalization['process']>[0], {
    inclusiveNamespacesPrefixList: [...inclusivePrefixes],
    ancestorNamespaces: ancestorNamespaces(element),
  });
}
