import type { Document, Element } from '@xmldom/xmldom';
import { truncateForEcho } from '../core/truncate';
import { childElements } from '../formats/xml/helpers';

/**
 * Locations of assertions as XPath. xmllint reports a line number and an element name; the DOM (which keeps line
 * numbers) turns that into a path. Schematron reports namespace-explicit paths, shortened here with the usual
 * prefixes so people can read them.
 */

/** Conventional prefixes of the namespaces e-invoices use. */
export const CONVENTIONAL_PREFIXES: Readonly<Record<string, string>> = {
  'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2': 'cbc',
  'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2': 'cac',
  'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2': 'ext',
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2': 'ubl',
  'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2': 'cn',
  'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2': 'ubl',
  'urn:oasis:names:specification:ubl:schema:xsd:Order-2': 'ubl',
  'urn:oasis:names:specification:ubl:schema:xsd:OrderResponse-2': 'ubl',
  'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100': 'rsm',
  'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100': 'ram',
  'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100': 'udt',
  'urn:un:unece:uncefact:data:standard:QualifiedDataType:100': 'qdt',
};

/**
 * `/cbc:Invoice/cac:InvoiceLine[2]/…` with the document's own prefixes and 1-based positions among same-named siblings.
 */
export function elementPath(el: Element): string {
  const steps: string[] = [];
  let cur: Element | null = el;
  while (cur && cur.nodeType === 1) {
    const parent: Element['parentNode'] = cur.parentNode;
    // The names come from the document; each step is bounded so a huge name cannot make a huge location.
    const name = truncateForEcho(cur.nodeName);
    if (parent && parent.nodeType === 1) {
      const same = childElements(parent as Element).filter(
        (s) => s.localName === cur!.localName && s.namespaceURI === cur!.namespaceURI,
      );
      steps.unshift(same.length > 1 ? `${name}[${same.indexOf(cur) + 1}]` : name);
    } else {
      steps.unshift(name);
    }
    cur = parent && parent.nodeType === 1 ? (parent as Element) : null;
  }
  return `/${steps.join('/')}`;
}

/** `{ns}local` → `prefix:local` with a conventional prefix, or `local` when the namespace has none. */
export function displayName(clark: string): string {
  const m = /^\{([^}]*)\}(.+)$/.exec(clark);
  if (!m) return clark;
  const prefix = CONVENTIONAL_PREFIXES[m[1] as string];
  return prefix ? `${prefix}:${m[2]}` : (m[2] as string);
}

interface LineIndex {
  byLine: Map<number, Element[]>;
}

const indexes = new WeakMap<Document, LineIndex>();

function lineIndex(doc: Document): LineIndex {
  let idx = indexes.get(doc);
  if (idx) return idx;
  idx = { byLine: new Map() };
  const root = doc.documentElement;
  const pending: Element[] = root ? [root] : [];
  while (pending.length > 0) {
    const el = pending.pop() as Element;
    const line = (el as unknown as { lineNumber?: number }).lineNumber;
    if (typeof line === 'number') {
      const list = idx.byLine.get(line) ?? [];
      list.push(el);
      idx.byLine.set(line, list);
    }
    for (let c = el.lastChild; c; c = c.previousSibling) if (c.nodeType === 1) pending.push(c as Element);
  }
  indexes.set(doc, idx);
  return idx;
}

/** The element a line-based message is about: same line and, when known, the same `{ns}local` name. */
export function findElement(doc: Document, line: number | undefined, clark: string | undefined): Element | undefined {
  if (line === undefined) return undefined;
  const candidates = lineIndex(doc).byLine.get(line) ?? [];
  if (clark) {
    const m = /^\{([^}]*)\}(.+)$/.exec(clark);
    const ns = m ? m[1] : '';
    const local = m ? m[2] : clark;
    const hit = candidates.find((e) => e.localName === local && (e.namespaceURI ?? '') === ns);
    if (hit) return hit;
  }
  return candidates.length === 1 ? candidates[0] : undefined;
}

// "/*:Invoice[namespace-uri()='urn:…:Invoice-2'][1]/*:AccountingSupplierParty[namespace-uri()='urn:…'][1]"
const SVRL_STEP = /\*:([A-Za-z_][\w.-]*)\[namespace-uri\(\)='([^']*)'\](\[\d+\])?/g;

/** Shortens Schematron's namespace-explicit paths: `*:X[namespace-uri()='…cbc…'][1]` → `cbc:X[1]`. */
export function simplifySvrlLocation(location: string): string {
  return location.replace(SVRL_STEP, (whole, local: string, ns: string, pos: string | undefined) => {
    const prefix = CONVENTIONAL_PREFIXES[ns];
    if (!prefix) return whole;
    return `${prefix}:${local}${pos ?? ''}`;
  });
}
