import type { ReadDocument, ReadElement, ReadNode } from '../../formats/xml/read-tree';
import { ATTRIBUTE, COMMENT, DOCUMENT, ELEMENT, PI, TEXT, type NodeKind, type XNode } from './model';

/**
 * Builds the XDM tree the compiled rules evaluate over from a parsed document (the read tree or an xmldom DOM): one
 * walk, adjacent text and CDATA merged, namespace declarations left out, every node numbered in document order.
 */

const XMLNS = 'http://www.w3.org/2000/xmlns/';
const NONE: readonly XNode[] = [];

class Node implements XNode {
  parent: Node | null = null;
  children: Node[] | readonly XNode[] = NONE;
  elements: Node[] | readonly XNode[] = NONE;
  attrs: Node[] | readonly XNode[] = NONE;
  order = 0;
  end = 0;
  index = 0;
  root!: XNode;
  readonly key: string;
  constructor(
    readonly kind: NodeKind,
    readonly ns: string,
    readonly local: string,
    readonly name: string,
    public value: string,
  ) {
    this.key = kind === ELEMENT ? `E{${ns}}${local}` : kind === ATTRIBUTE ? `A{${ns}}${local}` : '';
  }
}

function localOf(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

export function buildXdmTree(doc: ReadDocument | ReadNode): XNode {
  const root = new Node(DOCUMENT, '', '', '', '');
  root.root = root;
  let order = 0;
  root.order = order++;
  const source = doc as unknown as ReadNode;

  const fill = (target: Node, from: ReadNode): void => {
    const children: Node[] = [];
    const elements: Node[] = [];
    let text: Node | null = null;
    for (let c = from.firstChild; c; c = c.nextSibling) {
      const t = c.nodeType;
      if (t === 3 || t === 4) {
        const data = (c as unknown as { data: string }).data;
        if (text) {
          text.value += data;
          continue;
        }
        text = new Node(TEXT, '', '', '', data);
        add(text);
        continue;
      }
      text = null;
      if (t === 1) {
        const e = c as ReadElement;
        const el = new Node(ELEMENT, e.namespaceURI ?? '', e.localName ?? localOf(e.nodeName), e.nodeName, '');
        add(el);
        elements.push(el);
        const list = e.attributes;
        if (list.length > 0) {
          const attrs: Node[] = [];
          for (let k = 0; k < list.length; k++) {
            const a = list.item(k)!;
            if (a.namespaceURI === XMLNS || a.name === 'xmlns' || a.name.startsWith('xmlns:')) continue;
            const at = new Node(ATTRIBUTE, a.namespaceURI ?? '', localOf(a.name), a.name, a.value);
            at.parent = el;
            at.root = root;
            at.order = order++;
            at.end = at.order;
            at.index = attrs.length;
            attrs.push(at);
          }
          if (attrs.length > 0) el.attrs = attrs;
        }
        fill(el, e);
      } else if (t === 8) {
        add(new Node(COMMENT, '', '', '', (c as unknown as { data: string }).data));
      } else if (t === 7) {
        const p = c as unknown as { target: string; data: string };
        add(new Node(PI, '', p.target, p.target, p.data));
      }
    }
    if (children.length > 0) target.children = children;
    target.end = order - 1;
    if (elements.length > 0) target.elements = elements;

    function add(n: Node): void {
      n.parent = target;
      n.root = root;
      n.order = order++;
      n.end = n.order;
      n.index = children.length;
      children.push(n);
    }
  };
  // Text nodes get their order when created; a merged text node keeps the first one's.
  fill(root, source.nodeType === DOCUMENT ? source : (source as unknown as { ownerDocument: ReadNode }).ownerDocument);
  return root;
}

/** The string value of a node (XDM): concatenated descendant text for elements and the document. */
export function stringValueOf(node: XNode): string {
  if (node.kind !== ELEMENT && node.kind !== DOCUMENT) return node.value;
  if (node.children.length === 1 && node.children[0]!.kind === TEXT) return node.children[0]!.value;
  let out = '';
  const walk = (n: XNode): void => {
    for (const c of n.children) {
      if (c.kind === TEXT) out += c.value;
      else if (c.kind === ELEMENT) walk(c);
    }
  };
  walk(node);
  return out;
}
