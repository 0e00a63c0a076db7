import type { RawAttribute, ScanVisitor } from './xml-scanner';

/**
 * A read-only XML tree built from the scanner's single pass, for transformation input. Building xmldom's DOM after the
 * scanner had already checked the whole document took about half the conversion time of a 100 KiB invoice; this tree
 * is a plain object per node with the text and attribute values the scanner decoded.
 *
 * It implements only what the readers (src/en16931, src/transform) and format detection use, with xmldom's observable
 * behaviour: text, CDATA, comment and processing-instruction children inside elements (comments count for "has
 * content" in the unmapped report, but not for text), `null` namespace for unqualified names, `getAttribute` null when
 * absent, attributes in source order, live-looking node lists as plain arrays. The `Read*` interfaces below are what
 * those readers type against; xmldom's `Document` / `Element` satisfy them too, so every other caller keeps xmldom.
 *
 * Where xmldom would refuse (or build differently) a document the scanner accepts (names outside plain ASCII QNames,
 * `--` in a comment, namespace declarations of `xml` / `xmlns` or binding their URIs, two attributes with one expanded
 * name, U+0085 / U+2028 / U+2029 line ends), the builder says so and the caller parses with xmldom instead: the result
 * or the error is then xmldom's own.
 */

export interface ReadNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly parentNode: ReadNode | null;
  readonly firstChild: ReadNode | null;
  readonly lastChild: ReadNode | null;
  readonly nextSibling: ReadNode | null;
  readonly previousSibling: ReadNode | null;
  readonly textContent: string | null;
}

export interface ReadAttr {
  readonly name: string;
  readonly value: string;
  readonly namespaceURI: string | null;
}

export interface ReadList<T> {
  readonly length: number;
  item(index: number): T | null;
}

export interface ReadElement extends ReadNode {
  readonly localName: string | null;
  readonly namespaceURI: string | null;
  readonly attributes: ReadList<ReadAttr>;
  getAttribute(name: string): string | null;
  getAttributeNode(name: string): ReadAttr | null;
  hasAttribute(name: string): boolean;
  getElementsByTagName(qualifiedName: string): ReadList<ReadElement>;
  getElementsByTagNameNS(namespaceURI: string, localName: string): ReadList<ReadElement>;
}

/**
 * The first element child of `el`, and the next element sibling of an element: through the read tree's element links
 * when the node has them (text between elements skipped for free), else by walking the child list (xmldom).
 */
export function firstElementOf(el: ReadElement): ReadElement | null {
  const linked = (el as Partial<TreeElement>).firstElementChild;
  if (linked !== undefined) return linked;
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === ELEMENT_NODE) return c as ReadElement;
  return null;
}

export function nextElementOf(el: ReadElement): ReadElement | null {
  const linked = (el as Partial<TreeElement>).nextElementSibling;
  if (linked !== undefined) return linked;
  for (let c = el.nextSibling; c; c = c.nextSibling) if (c.nodeType === ELEMENT_NODE) return c as ReadElement;
  return null;
}

export interface ReadDocument {
  readonly documentElement: ReadElement | null;
  /**
   * Namespace URIs declared anywhere in the document (non-empty values of `xmlns` / `xmlns:*`), when the parser
   * collected them while reading; absent on xmldom documents, where detection walks the tree for them.
   */
  readonly declaredNamespaces?: ReadonlySet<string>;
  getElementsByTagNameNS(namespaceURI: string, localName: string): ReadList<ReadElement>;
}

const ELEMENT_NODE = 1;
const NAMESPACES_XML = 'http://www.w3.org/XML/1998/namespace';
const NAMESPACES_XMLNS = 'http://www.w3.org/2000/xmlns/';

abstract class TreeNode {
  parentNode: TreeParent | null = null;
  nextSibling: TreeNode | null = null;
  previousSibling: TreeNode | null = null;
  abstract readonly nodeType: number;
  abstract readonly nodeName: string;
  get firstChild(): TreeNode | null {
    return null;
  }
  get lastChild(): TreeNode | null {
    return null;
  }
  abstract get textContent(): string | null;
}

class TreeCharacterData extends TreeNode {
  constructor(
    readonly nodeType: 3 | 4 | 8,
    readonly data: string,
  ) {
    super();
  }
  get nodeName(): string {
    return this.nodeType === 3 ? '#text' : this.nodeType === 4 ? '#cdata-section' : '#comment';
  }
  get nodeValue(): string {
    return this.data;
  }
  get textContent(): string {
    return this.data;
  }
}

class TreeProcessingInstruction extends TreeNode {
  readonly nodeType = 7;
  constructor(
    readonly target: string,
    readonly data: string,
  ) {
    super();
  }
  get nodeName(): string {
    return this.target;
  }
  get textContent(): string {
    return this.data;
  }
}

class TreeAttr implements ReadAttr {
  readonly nodeType = 2;
  constructor(
    readonly name: string,
    readonly localName: string,
    readonly value: string,
    readonly namespaceURI: string | null,
  ) {}
  get nodeName(): string {
    return this.name;
  }
  get nodeValue(): string {
    return this.value;
  }
}

class TreeList<T> implements ReadList<T> {
  constructor(private readonly items: readonly T[]) {}
  get length(): number {
    return this.items.length;
  }
  item(index: number): T | null {
    return this.items[index] ?? null;
  }
}

// Most elements have no attributes: one shared empty list for all of them.
const NO_ATTRIBUTE_LIST: readonly TreeAttr[] = [];
const NO_ATTRIBUTES = new TreeList<TreeAttr>(NO_ATTRIBUTE_LIST);

abstract class TreeParent extends TreeNode {
  first: TreeNode | null = null;
  last: TreeNode | null = null;
  /** Element children linked apart from text, as in the DOM's ParentNode: readers look elements up by name. */
  firstElementChild: TreeElement | null = null;
  lastElementChild: TreeElement | null = null;
  override get firstChild(): TreeNode | null {
    return this.first;
  }
  override get lastChild(): TreeNode | null {
    return this.last;
  }
  append(node: TreeNode): void {
    node.parentNode = this;
    if (this.last) {
      this.last.nextSibling = node;
      node.previousSibling = this.last;
    } else this.first = node;
    this.last = node;
  }
  appendElement(el: TreeElement): void {
    this.append(el);
    if (this.lastElementChild) this.lastElementChild.nextElementSibling = el;
    else this.firstElementChild = el;
    this.lastElementChild = el;
  }
  /** Descendant elements in document order, without this node. */
  protected collect(match: (e: TreeElement) => boolean): TreeList<TreeElement> {
    const out: TreeElement[] = [];
    const walk = (p: TreeParent): void => {
      for (let c = p.firstElementChild; c; c = c.nextElementSibling) {
        if (match(c)) out.push(c);
        walk(c);
      }
    };
    walk(this);
    return new TreeList(out);
  }
  getElementsByTagNameNS(namespaceURI: string, localName: string): TreeList<TreeElement> {
    return this.collect(
      (e) =>
        (namespaceURI === '*' || e.namespaceURI === namespaceURI) && (localName === '*' || e.localName === localName),
    );
  }
}

class TreeElement extends TreeParent implements ReadElement {
  readonly nodeType = ELEMENT_NODE;
  nextElementSibling: TreeElement | null = null;
  constructor(
    readonly nodeName: string,
    readonly localName: string,
    readonly namespaceURI: string | null,
    readonly attributes: TreeList<TreeAttr>,
    private readonly attributeList: readonly TreeAttr[],
  ) {
    super();
  }
  get tagName(): string {
    return this.nodeName;
  }
  get textContent(): string {
    // As xmldom: text and CDATA of all descendants, comments and processing instructions left out.
    const first = this.first;
    if (first === null) return '';
    if (first.nextSibling === null && (first.nodeType === 3 || first.nodeType === 4))
      return (first as TreeCharacterData).data;
    let out = '';
    const walk = (p: TreeParent): void => {
      for (let c = p.first; c; c = c.nextSibling) {
        if (c.nodeType === 3 || c.nodeType === 4) out += (c as TreeCharacterData).data;
        else if (c instanceof TreeElement) walk(c);
      }
    };
    walk(this);
    return out;
  }
  getAttributeNode(name: string): TreeAttr | null {
    for (const a of this.attributeList) if (a.name === name) return a;
    return null;
  }
  getAttribute(name: string): string | null {
    return this.getAttributeNode(name)?.value ?? null;
  }
  hasAttribute(name: string): boolean {
    return this.getAttributeNode(name) !== null;
  }
  getElementsByTagName(qualifiedName: string): TreeList<TreeElement> {
    return this.collect((e) => qualifiedName === '*' || e.nodeName === qualifiedName);
  }
}

class TreeDocument extends TreeParent implements ReadDocument {
  readonly nodeType = 9;
  readonly nodeName = '#document';
  documentElement: TreeElement | null = null;
  readonly declaredNamespaces = new Set<string>();
  get textContent(): null {
    return null;
  }
}

/**
 * Attribute names xmldom accepts without question (the scanner says the same of element names): ASCII NCNames, at most
 * one prefix.
 */
const PLAIN_QNAME = /^[A-Za-z_][A-Za-z0-9_.-]*(?::[A-Za-z_][A-Za-z0-9_.-]*)?$/;
const PLAIN_PI_TARGET = /^[A-Za-z_][A-Za-z0-9_.:-]*$/;

/** Builds a TreeDocument from scanner events; `unsupported` is set when xmldom must parse the document instead. */
export class ReadTreeBuilder implements ScanVisitor {
  readonly wantsText = true;
  readonly normalizeLineEndings = true;
  readonly document = new TreeDocument();
  /** Why the document is left to xmldom (first reason), or undefined. */
  unsupported: string | undefined;
  private current: TreeParent = this.document;
  /** Namespace declarations per open element (undefined when none), innermost last, for attribute prefixes. */
  private readonly scopes: Array<Map<string, string> | undefined> = [];

  private resolve(prefix: string, own: Map<string, string> | undefined): string | undefined {
    if (prefix === 'xml') return NAMESPACES_XML;
    const local = own?.get(prefix);
    if (local !== undefined) return local;
    for (let k = this.scopes.length - 1; k >= 0; k--) {
      const uri = this.scopes[k]?.get(prefix);
      if (uri !== undefined) return uri;
    }
    return undefined;
  }

  startElement(
    name: string,
    attributes: readonly RawAttribute[],
    _offset: number,
    namespaceURI: string,
    localName: string,
    plainName: boolean,
  ): void {
    if (!plainName) this.unsupported ??= `element name <${name}>`;
    let declarations: Map<string, string> | undefined;
    const count = attributes.length;
    for (let k = 0; k < count; k++) {
      const a = attributes[k] as RawAttribute;
      const n = a.name;
      if (n === 'xmlns' || n.startsWith('xmlns:')) {
        const prefix = n === 'xmlns' ? '' : n.slice(6);
        // xmldom refuses to rebind these (DOM NAMESPACE_ERR); leave such documents to it.
        if (prefix === 'xml' || prefix === 'xmlns' || a.value === NAMESPACES_XML || a.value === NAMESPACES_XMLNS)
          this.unsupported ??= `namespace declaration ${n}`;
        (declarations ??= new Map()).set(prefix, a.value);
        if (a.value !== '') this.document.declaredNamespaces.add(a.value);
      }
    }
    let list = NO_ATTRIBUTES;
    let attrs: readonly TreeAttr[] = NO_ATTRIBUTE_LIST;
    if (attributes.length > 0) {
      const own: TreeAttr[] = [];
      attrs = own;
      let prefixed = 0;
      for (const a of attributes) {
        const n = a.name;
        if (!PLAIN_QNAME.test(n)) this.unsupported ??= `attribute name "${n}"`;
        const colon = n.indexOf(':');
        let ns: string | null = null;
        let local = n;
        if (colon !== -1) {
          local = n.slice(colon + 1);
          const prefix = n.slice(0, colon);
          if (prefix === 'xmlns') ns = NAMESPACES_XMLNS;
          else {
            ns = this.resolve(prefix, declarations) ?? null;
            prefixed++;
          }
        } else if (n === 'xmlns') ns = NAMESPACES_XMLNS;
        own.push(new TreeAttr(n, local, a.value, ns));
      }
      // Two attributes with one expanded name (different prefixes, same URI): xmldom keeps only one.
      if (prefixed > 1) {
        const seen = new Set<string>();
        for (const a of attrs) {
          if (a.namespaceURI === null || a.namespaceURI === NAMESPACES_XMLNS) continue;
          const key = `${a.namespaceURI} ${a.localName}`;
          if (seen.has(key)) this.unsupported ??= `attributes with one expanded name {${key}}`;
          seen.add(key);
        }
      }
      list = new TreeList(own);
    }
    const el = new TreeElement(name, localName, namespaceURI === '' ? null : namespaceURI, list, attrs);
    if (this.current === this.document) this.document.documentElement = el;
    this.current.appendElement(el);
    this.current = el;
    this.scopes.push(declarations);
  }

  endElement(): void {
    this.scopes.pop();
    this.current = this.current.parentNode as TreeParent;
  }

  text(value: string, cdata?: boolean): void {
    // Text outside the root is whitespace (the scanner refuses anything else) and no reader looks at it.
    if (this.current === this.document) return;
    // xmldom makes no node for an empty CDATA section.
    if (value === '') return;
    this.current.append(new TreeCharacterData(cdata ? 4 : 3, value));
  }

  comment(data: string): void {
    // XML 1.0 [15]: xmldom's grammar refuses these.
    if (data.includes('--') || data.endsWith('-')) this.unsupported ??= 'comment containing "--"';
    if (this.current !== this.document) this.current.append(new TreeCharacterData(8, data));
  }

  processingInstruction(target: string, data: string): void {
    if (!PLAIN_PI_TARGET.test(target)) this.unsupported ??= `processing instruction target "${target}"`;
    if (this.current !== this.document) this.current.append(new TreeProcessingInstruction(target, data));
  }
}

/** Line ends xmldom turns into a line feed (XML 1.1 rules) that the scanner does not treat as line ends. */
export const UNUSUAL_LINE_ENDS = /[\u0085\u2028\u2029]/;
