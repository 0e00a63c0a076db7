import type { Element, Node } from '@xmldom/xmldom';
import type { ReadElement, ReadNode } from './read-tree';

/**
 * The XML helpers every writer and reader shares: escaping for hand-built markup, and walking a DOM's elements (the
 * xmldom DOM of the secure parser, or the read tree of src/formats/xml/read-tree.ts). One copy, so an escaping rule is
 * fixed once.
 */

// ---------------------------------------------------------------------------------------------------------------------
// Escaping

/** `&`, `<`, `>` and `"`: safe in text and in double-quoted attribute values (templates that write both). */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** {@link escapeXml}, and carriage returns as `&#13;` so that a CR in a value survives line-end normalisation. */
export function escapeXmlKeepingCr(s: string): string {
  return escapeXml(s).replace(/\r/g, '&#13;');
}

// Most values (amounts, codes, dates) need no escaping: one test instead of four replacements.
const TEXT_SPECIAL = /[&<>\r]/;
const ATTR_SPECIAL = /[&<>\r"\t\n]/;

/** Text content as canonical XML writes it: `&`, `<`, `>` and CR escaped, everything else as is. */
export function escapeText(s: string): string {
  if (!TEXT_SPECIAL.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;');
}

/** A double-quoted attribute value: {@link escapeText}, `"`, and tab and line feed (which parsing would normalise). */
export function escapeAttr(s: string): string {
  if (!ATTR_SPECIAL.test(s)) return s;
  return escapeText(s).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;');
}

// ---------------------------------------------------------------------------------------------------------------------
// Element walking

const ELEMENT_NODE = 1;

export function isElement(n: Node | null | undefined): n is Element {
  return !!n && n.nodeType === ELEMENT_NODE;
}

/** The element children of `parent`, in document order (xmldom elements, or read-tree elements). */
export function childElements(parent: Node): Element[];
export function childElements(parent: ReadNode): ReadElement[];
export function childElements(parent: Node | ReadNode): Array<Element | ReadElement> {
  const out: Array<Element | ReadElement> = [];
  for (let c: Node | ReadNode | null = parent.firstChild; c; c = c.nextSibling)
    if (c.nodeType === ELEMENT_NODE) out.push(c as Element | ReadElement);
  return out;
}

/** The element children of `parent` with namespace `ns` and local name `local`, in document order. */
export function childElementsNamed(parent: Node, ns: string, local: string): Element[] {
  const out: Element[] = [];
  for (let c = parent.firstChild; c; c = c.nextSibling)
    if (isElement(c) && c.namespaceURI === ns && c.localName === local) out.push(c);
  return out;
}

/** The first element child of `parent` with namespace `ns` and local name `local`. */
export function firstChildElement(parent: Node | undefined, ns: string, local: string): Element | undefined {
  for (let c = parent?.firstChild; c; c = c.nextSibling)
    if (isElement(c) && c.namespaceURI === ns && c.localName === local) return c;
  return undefined;
}
