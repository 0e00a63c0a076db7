import {
  firstElementOf,
  nextElementOf,
  type ReadAttr,
  type ReadElement,
  type ReadNode,
} from '../formats/xml/read-tree';
import { NS } from '../formats/xml/namespaces';
import type { Decimal, IsoDate, PaymentInstructions, ReadProblem, UnmappedElement } from './model';

/**
 * Reading helpers shared by the UBL and CII readers. Every element and attribute a reader takes a value from is marked;
 * afterwards `unmapped()` walks the document and lists the top-most elements (and attributes of used elements) nobody
 * took, so a reader can never drop content silently: whatever it does not know shows up in the list.
 */

const PREFIX_BY_NS: Record<string, string> = {
  [NS.cbc]: 'cbc',
  [NS.cac]: 'cac',
  [NS.ext]: 'ext',
  [NS.ram]: 'ram',
  [NS.rsm]: 'rsm',
  [NS.udt]: 'udt',
  [NS.qdt]: 'qdt',
  // Svefaktura 1.0 (UBL 1.0 basic components, SFTI aggregates), with the prefixes its documents use.
  'urn:oasis:names:tc:ubl:CommonBasicComponents:1:0': 'cbc',
  'urn:sfti:CommonAggregateComponents:1:0': 'cac',
};

/** Attributes that carry no business content of their own. */
const IGNORED_ATTRIBUTES = new Set(['xmlns', 'xsi:schemaLocation', 'schemaLocation']);
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export class ReadContext {
  /** Elements and attributes taken (attributes are not nodes in the read interface, hence `object`). */
  private readonly used = new Set<object>();
  readonly problems: ReadProblem[] = [];

  /** Child elements of `el` with this namespace and local name, in document order. */
  children(el: ReadElement, ns: string, local: string): ReadElement[] {
    const out: ReadElement[] = [];
    for (let c = firstElementOf(el); c; c = nextElementOf(c)) {
      if (c.localName === local && (c.namespaceURI ?? '') === ns) out.push(c);
    }
    return out;
  }

  child(el: ReadElement | undefined, ns: string, local: string): ReadElement | undefined {
    if (!el) return undefined;
    for (let c = firstElementOf(el); c; c = nextElementOf(c)) {
      if (c.localName === local && (c.namespaceURI ?? '') === ns) return c;
    }
    return undefined;
  }

  /** Follows a chain of `[ns, local]` steps through first children. */
  path(el: ReadElement | undefined, ...steps: Array<readonly [string, string]>): ReadElement | undefined {
    let cur = el;
    for (const [ns, local] of steps) cur = this.child(cur, ns, local);
    return cur;
  }

  /** Marks the element as read and returns its text (whitespace-trimmed). */
  take(el: ReadElement | undefined): string | undefined {
    if (!el) return undefined;
    this.used.add(el);
    return textOf(el).trim();
  }

  /**
   * Like take, but the text as written, line breaks and surrounding whitespace included, for free text whose layout
   * carries meaning (XRechnung's `#SKONTO#…#` lines in BT-20 end with a line break, rule BR-DE-18). Blank text is ''.
   */
  takeVerbatim(el: ReadElement | undefined): string | undefined {
    if (!el) return undefined;
    this.used.add(el);
    const text = textOf(el);
    return text.trim() === '' ? '' : text;
  }

  /** Marks an element as fully consumed (structure-only elements whose content the reader checked itself). */
  accept(el: ReadElement | undefined): void {
    if (el) this.used.add(el);
  }

  attr(el: ReadElement | undefined, name: string): string | undefined {
    if (!el) return undefined;
    const a = el.getAttributeNode(name);
    if (!a) return undefined;
    this.used.add(a);
    return a.value.trim();
  }

  decimal(el: ReadElement | undefined, term: string): Decimal | undefined {
    const v = this.take(el);
    if (v === undefined || !el) return undefined;
    if (!DECIMAL.test(v))
      this.problems.push({ path: pathOf(el), term, message: `"${v}" is not a decimal number in fixed notation` });
    return v;
  }

  isoDate(el: ReadElement | undefined, term: string): IsoDate | undefined {
    const v = this.take(el);
    if (v === undefined || !el) return undefined;
    if (!ISO_DATE.test(v)) this.problems.push({ path: pathOf(el), term, message: `"${v}" is not a date (YYYY-MM-DD)` });
    return v;
  }

  /** A CII `udt:DateTimeString` / `qdt:DateTimeString` / `udt:DateString` with format 102 → ISO date. */
  date102(el: ReadElement | undefined, term: string): IsoDate | undefined {
    if (!el) return undefined;
    const format = this.attr(el, 'format');
    const v = this.take(el) ?? '';
    const m = /^(\d{4})(\d{2})(\d{2})$/.exec(v);
    if (format !== undefined && format !== '102') {
      this.problems.push({
        path: pathOf(el),
        term,
        message: `date format "${format}" is not 102 (CCYYMMDD), which EN 16931 requires`,
      });
      return v;
    }
    if (!m) {
      this.problems.push({ path: pathOf(el), term, message: `"${v}" is not a format 102 date (CCYYMMDD)` });
      return v;
    }
    return `${m[1]}-${m[2]}-${m[3]}`;
  }

  /** The top-most elements below `root` that nothing took, and unread attributes of taken elements. */
  unmapped(root: ReadElement): UnmappedElement[] {
    // One walk: each element reports whether anything in its subtree was taken. Findings are collected as nodes and
    // named at the end, so those of a subtree that turns out to be untaken as a whole are dropped cheaply (the subtree
    // is then reported once, at its top).
    const found: Array<ReadElement | [ReadElement, ReadAttr]> = [];
    const visit = (el: ReadElement): boolean => {
      const taken = this.used.has(el);
      if (taken) {
        for (let k = 0; k < el.attributes.length; k++) {
          const a = el.attributes.item(k);
          if (
            !a ||
            this.used.has(a) ||
            a.name.startsWith('xmlns') ||
            IGNORED_ATTRIBUTES.has(a.name) ||
            a.namespaceURI === XSI
          )
            continue;
          found.push([el, a]);
        }
      }
      let any = taken;
      for (let ce = firstElementOf(el); ce; ce = nextElementOf(ce)) {
        const mark = found.length;
        if (visit(ce)) {
          any = true;
          continue;
        }
        found.length = mark;
        // An element without text, attributes or children carries nothing that could be lost.
        if (ce.firstChild !== null || ce.attributes.length !== 0) found.push(ce);
      }
      return any;
    };
    visit(root);
    return found.map((f) =>
      Array.isArray(f)
        ? { path: `${pathOf(f[0])}/@${f[1].name}`, text: shorten(f[1].value) }
        : { path: pathOf(f), ...(hasText(f) ? { text: shorten(textOf(f).trim()) } : {}) },
    );
  }
}

function hasText(el: ReadElement): boolean {
  return textOf(el).trim() !== '';
}

/**
 * The element's text content (its text and CDATA descendants, concatenated), as `textContent` gives it, without the
 * DOM tree walker xmldom's getter sets up for every call: readers take the text of nearly every leaf.
 */
export function textOf(el: ReadElement): string {
  const first = el.firstChild;
  if (first === null) return '';
  // The usual leaf: one text node.
  if (first.nextSibling === null && (first.nodeType === 3 || first.nodeType === 4))
    return (first as unknown as { data: string }).data;
  let out = '';
  const walk = (n: ReadNode): void => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3 || c.nodeType === 4) out += (c as unknown as { data: string }).data;
      else if (c.nodeType === 1) walk(c);
    }
  };
  walk(el);
  return out;
}

function shorten(s: string): string {
  const t = s.replace(/\s+/g, ' ');
  return t.length > 80 ? `${t.slice(0, 77)}...` : t;
}

function nameOf(el: ReadElement): string {
  const p = PREFIX_BY_NS[el.namespaceURI ?? ''];
  const local = el.localName ?? el.nodeName;
  return p ? `${p}:${local}` : local;
}

/** `/Invoice/cac:InvoiceLine[2]/cbc:Note` with canonical prefixes; the index only where siblings share the name. */
export function pathOf(node: ReadElement): string {
  const parts: string[] = [];
  let cur: ReadNode | null = node;
  while (cur && cur.nodeType === 1) {
    const el = cur as ReadElement;
    const parent = el.parentNode;
    let index = 0;
    let count = 0;
    if (parent) {
      for (let s = parent.firstChild; s; s = s.nextSibling) {
        if (
          s.nodeType === 1 &&
          (s as ReadElement).localName === el.localName &&
          (s as ReadElement).namespaceURI === el.namespaceURI
        ) {
          count++;
          if (s === el) index = count;
        }
      }
    }
    const isRoot = !parent || parent.nodeType !== 1;
    parts.unshift(isRoot ? (el.localName ?? el.nodeName) : `${nameOf(el)}${count > 1 ? `[${index}]` : ''}`);
    cur = parent;
  }
  return `/${parts.join('/')}`;
}

/** Removes undefined members and empty objects, so models compare by content. */
export function compact<T extends object>(o: T): T | undefined {
  // A plain loop: readers call this for every party, address and line, and entries/filter/fromEntries allocate thrice.
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(o)) {
    const v = (o as Record<string, unknown>)[k];
    if (v !== undefined) (out ??= {})[k] = v;
  }
  return out as T | undefined;
}

/** JSON with object keys sorted, for comparing models regardless of the order readers filled them in. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === 'object' && !Array.isArray(val)
      ? Object.fromEntries(
          Object.entries(val as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : val,
  );
}

/** BG-16 as read, or undefined when nothing of it was in the document. */
export function paymentOrNothing(p: PaymentInstructions): PaymentInstructions | undefined {
  const c = compact(p) as PaymentInstructions;
  const directDebit = c.directDebit && compact(c.directDebit);
  const out: PaymentInstructions = { ...c, creditTransfers: c.creditTransfers ?? [] };
  if (directDebit) out.directDebit = directDebit;
  else delete out.directDebit;
  const empty =
    out.creditTransfers.length === 0 &&
    out.meansTypeCode === undefined &&
    out.meansText === undefined &&
    out.remittanceInformation === undefined &&
    !out.card &&
    !out.directDebit;
  return empty ? undefined : out;
}
