import { XMLSerializer, type Attr, type Document, type Element, type Node } from '@xmldom/xmldom';
import { parseXml } from '../../../src/formats';

/**
 * A deterministic, seeded mutation generator over invoices (UBL Invoice / CreditNote, CII): each variant is a source
 * document with 1–4 mutations applied to its DOM, serialized back, so it stays well-formed XML whatever the mutation.
 * The mutations aim at what business rules test: elements removed, duplicated or moved; amounts, dates, codes and
 * identifiers altered in the ways rules tell apart; invoice lines multiplied.
 *
 * Variant `i` of seed `s` depends on (s, i, the sources) only, so one variant can be regenerated alone from a report,
 * and the same seed gives byte-identical variants.
 */

export const MUTATION_KINDS = [
  'remove',
  'duplicate',
  'reorder',
  'amount',
  'date',
  'code',
  'identifier',
  'lines',
] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

export interface MutationSource {
  /** Stable name (corpus path, suite case) used in variant names and reports. */
  name: string;
  xmlText: string;
  /** The Schematron packs that apply to the source; its variants are checked against them. */
  packIds: readonly string[];
  /** Relative chance of being drawn (default 1). */
  weight?: number;
}

export interface AppliedMutation {
  kind: MutationKind;
  /** Path of the element or attribute changed, e.g. /Invoice/cac:InvoiceLine[2]/cbc:LineExtensionAmount. */
  target: string;
  /** What was done: "100.00 → 1e3", "removed", "×3 (ids 4, 5, 6)". */
  detail: string;
}

export interface Variant {
  seed: number;
  index: number;
  source: string;
  packIds: readonly string[];
  mutations: AppliedMutation[];
  xmlText: string;
}

// ---------------------------------------------------------------------------------------------------------------------
// PRNG: sfc32 seeded through splitmix32 (small, fast, well distributed; seeds are 32-bit integers).

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
}

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export function createRng(...seeds: number[]): Rng {
  let mixed = 0x2545f491;
  for (const s of seeds) mixed = splitmix32((mixed ^ Math.imul(s >>> 0, 0x27d4eb2d)) >>> 0)();
  const init = splitmix32(mixed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const next32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t;
  };
  for (let k = 0; k < 12; k++) next32();
  const next = (): number => next32() / 0x100000000;
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Code lists: short extracts of the EN 16931 code lists (valid values) beside values the rules must refuse.

const CODES = {
  currency: ['EUR', 'USD', 'GBP', 'SEK', 'NOK', 'DKK', 'CHF', 'HUF', 'PLN', 'JPY', 'XXX', 'BOV'],
  country: ['DE', 'FR', 'NL', 'BE', 'IT', 'ES', 'SE', 'NO', 'AT', 'GB', 'GR', 'EL', 'XI', '1A', 'US'],
  vatCategory: ['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M', 'B'],
  unit: ['C62', 'H87', 'EA', 'KGM', 'MTR', 'LTR', 'HUR', 'DAY', 'XPP', 'ZZ', 'KWH', 'XBX'],
  scheme: ['0088', '0007', '0192', '0184', '0208', '9930', '9957', '0060', '0106', '9944', 'EM', 'SEPA', 'VAT'],
  invoiceType: ['380', '381', '383', '384', '386', '389', '751', '326', '875', '261', '71', '80'],
  paymentMeans: ['1', '10', '30', '31', '42', '48', '49', '57', '58', '59', '68', '97', 'ZZZ'],
  vatex: ['VATEX-EU-79-C', 'VATEX-EU-132', 'VATEX-EU-143', 'VATEX-EU-AE', 'VATEX-EU-D', 'VATEX-EU-G', 'VATEX-EU-IC'],
  allowanceReason: ['41', '42', '60', '62', '63', '64', '65', '66', '67', '68', '95', '100', '102', '104', '105'],
  chargeReason: ['AA', 'ABL', 'ADR', 'FC', 'SAA', 'TV', 'ZZZ', 'ABK', 'AEO'],
  mime: ['application/pdf', 'image/png', 'image/jpeg', 'text/csv', 'application/vnd.ms-excel', 'text/xml'],
  dateFormat: ['102', '203', '610'],
} as const satisfies Record<string, readonly string[]>;
type CodeList = keyof typeof CODES;

/** Values no code list holds, and valid ones made invalid by case or space. */
const BAD_CODES = ['', 'XX', 'ZZZZ', '999', 'eur', ' EUR', 'S ', '0', '-', 'ÄÖ', 'INVALID-CODE'];

const ELEMENT_CODE_LISTS: Record<string, CodeList> = {
  DocumentCurrencyCode: 'currency',
  TaxCurrencyCode: 'currency',
  InvoiceCurrencyCode: 'currency',
  SourceCurrencyCode: 'currency',
  TargetCurrencyCode: 'currency',
  IdentificationCode: 'country',
  CountryID: 'country',
  CategoryCode: 'vatCategory',
  InvoiceTypeCode: 'invoiceType',
  CreditNoteTypeCode: 'invoiceType',
  PaymentMeansCode: 'paymentMeans',
  TaxExemptionReasonCode: 'vatex',
  ExemptionReasonCode: 'vatex',
  AllowanceChargeReasonCode: 'allowanceReason',
  ReasonCode: 'chargeReason',
  BilledQuantityUnitCode: 'unit',
};

const ATTRIBUTE_CODE_LISTS: Record<string, CodeList> = {
  currencyID: 'currency',
  unitCode: 'unit',
  schemeID: 'scheme',
  mimeCode: 'mime',
  format: 'dateFormat',
};

// ---------------------------------------------------------------------------------------------------------------------
// DOM helpers

function elementChildren(el: Element): Element[] {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) out.push(c as Element);
  return out;
}

function allElements(doc: Document): Element[] {
  const out: Element[] = [];
  const walk = (el: Element): void => {
    out.push(el);
    for (const c of elementChildren(el)) walk(c);
  };
  if (doc.documentElement) walk(doc.documentElement);
  return out;
}

function attributes(el: Element): Attr[] {
  const out: Attr[] = [];
  for (let k = 0; k < el.attributes.length; k++) {
    const a = el.attributes.item(k);
    if (a && a.name !== 'xmlns' && a.prefix !== 'xmlns') out.push(a);
  }
  return out;
}

/** A leaf element's text (no element children), or undefined. */
function leafText(el: Element): string | undefined {
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) return undefined;
  return el.textContent ?? '';
}

function setText(el: Element, value: string): void {
  while (el.firstChild) el.removeChild(el.firstChild);
  if (value !== '') el.appendChild(el.ownerDocument!.createTextNode(value));
}

function pathOf(node: Node): string {
  if (node.nodeType === 2) {
    const a = node as Attr;
    return `${a.ownerElement ? pathOf(a.ownerElement) : ''}/@${a.name}`;
  }
  const steps: string[] = [];
  for (let n: Node | null = node; n && n.nodeType === 1; n = n.parentNode) {
    const el = n as Element;
    const parent = el.parentNode;
    let step = el.nodeName;
    if (parent && parent.nodeType === 1) {
      const same = elementChildren(parent as Element).filter((s) => s.nodeName === el.nodeName);
      if (same.length > 1) step += `[${same.indexOf(el) + 1}]`;
    }
    steps.unshift(step);
  }
  return `/${steps.join('/')}`;
}

// ---------------------------------------------------------------------------------------------------------------------
// Value alterations

const AMOUNT_NAME = /(Amount|Quantity|Percent|Price|Total|Rate|Measure|Numeric|Multiplier|Factor|Percentage)$/;
const NUMBER = /^[+-]?\d+(\.\d+)?$/;

/** Exact decimal arithmetic on the lexical form: units × 10^-scale. */
function decimal(text: string): { units: bigint; scale: number } {
  const t = text.trim();
  const [int, frac = ''] = t.replace(/^\+/, '').split('.') as [string, string | undefined];
  return { units: BigInt(`${int}${frac}`), scale: frac.length };
}

function formatDecimal(units: bigint, scale: number): string {
  const neg = units < 0n;
  const digits = (neg ? -units : units).toString().padStart(scale + 1, '0');
  const s = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return neg ? `-${s}` : s;
}

function alterAmount(value: string, rng: Rng): string {
  const t = value.trim();
  const numeric = NUMBER.test(t);
  const { units, scale } = numeric ? decimal(t) : { units: 10000n, scale: 2 };
  const s2 = Math.max(scale, 2);
  const at2 = units * 10n ** BigInt(s2 - scale);
  const options: Array<() => string> = [
    () => formatDecimal(at2 + 1n, s2),
    () => formatDecimal(at2 - 1n, s2),
    () => formatDecimal(units * 10n, scale),
    () => formatDecimal(-units, scale),
    () => formatDecimal(units * 10n ** 6n + 1n, scale + 6),
    () => formatDecimal(units, scale) + '0000',
    () => rng.pick(['abc', '12,50', '1.000,00', 'NaN', 'INF', '--1', '1.2.3', '€10']),
    () => '',
    () => rng.pick([` ${t}`, `${t} `, ` ${t}\n `]),
    () => rng.pick(['1e3', '1E2', `${formatDecimal(units, scale)}E0`, '-1.5e-2']),
    () => rng.pick(['0', '0.00', '-0.00', '99999999999999.99', '0.001']),
  ];
  return rng.pick(options)();
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const BASIC_DATE = /^(\d{4})(\d{2})(\d{2})$/;

function alterDate(value: string, basic: boolean, rng: Rng): string {
  const t = value.trim();
  const m = ISO_DATE.exec(t) ?? BASIC_DATE.exec(t);
  const [y, mo, d] = m ? [m[1]!, m[2]!, m[3]!] : ['2024', '01', '15'];
  const fmt = (yy: string, mm: string, dd: string): string => (basic ? `${yy}${mm}${dd}` : `${yy}-${mm}-${dd}`);
  const shifted = (days: number): string => {
    const dt = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
    if (Number.isNaN(dt.getTime())) return fmt(y, mo, d);
    dt.setUTCDate(dt.getUTCDate() + days);
    const iso = dt.toISOString().slice(0, 10);
    return basic ? iso.replace(/-/g, '') : iso;
  };
  const options: Array<() => string> = [
    () => fmt(y, '02', '30'),
    () => fmt(y, '13', '01'),
    () => fmt(y, mo, '00'),
    () => fmt('2024', '02', '29'),
    () => fmt('2023', '02', '29'),
    () => fmt('1900', '02', '29'),
    () => fmt('2000', '02', '29'),
    () => (basic ? `${y}-${mo}-${d}` : `${y}${mo}${d}`),
    () => `${d}.${mo}.${y}`,
    () => `${y}/${mo}/${d}`,
    () => `${y}-${mo}-${d}T00:00:00`,
    () => `${fmt(y, mo, d)}Z`,
    () => `${fmt(y, mo, d)}+01:00`,
    () => '',
    () => ` ${fmt(y, mo, d)} `,
    () => shifted(rng.pick([-1, 1, -366, 365, 3650])),
  ];
  return rng.pick(options)();
}

function alterCode(value: string, list: CodeList, rng: Rng): string {
  if (rng.next() < 0.6) {
    const others = CODES[list].filter((c) => c !== value);
    return rng.pick(others.length > 0 ? others : CODES[list]);
  }
  return rng.pick([...BAD_CODES, value.toLowerCase(), ` ${value} `]);
}

function alterIdentifier(value: string, rng: Rng): string {
  const options: Array<() => string> = [
    () => '',
    () => (value || 'X').repeat(Math.ceil(300 / Math.max(1, value.length))).slice(0, 300),
    () => {
      // Break a check digit: change the last digit (GLN, VAT and organisation numbers end with one).
      const k = value.search(/\d(?=\D*$)/);
      if (k < 0) return `${value}1`;
      return `${value.slice(0, k)}${(Number(value[k]) + 1 + rng.int(8)) % 10}${value.slice(k + 1)}`;
    },
    () => ` ${value} `,
    () => `${value.slice(0, Math.ceil(value.length / 2))} ${value.slice(Math.ceil(value.length / 2))}`,
    () => value.slice(0, -1),
    () => rng.pick(['0', '1', 'ÄÖÜ-ß', 'DE123456789', 'NL000099998B57', '7300010000001', '00000000000000']),
  ];
  return rng.pick(options)();
}

// ---------------------------------------------------------------------------------------------------------------------
// Mutations

type Mutator = (doc: Document, rng: Rng) => AppliedMutation | undefined;

const LINE_NAMES = new Set(['InvoiceLine', 'CreditNoteLine', 'IncludedSupplyChainTradeLineItem']);
const ID_NAME = /(^ID$|ID$|Identifier$|^GlobalID$|^EndpointID$|^CompanyID$)/;

function truncateForDetail(s: string): string {
  const one = JSON.stringify(s);
  return one.length > 40 ? `${one.slice(0, 37)}…"` : one;
}

function codeListOfElement(el: Element): CodeList | undefined {
  const name = el.localName ?? '';
  if (name in ELEMENT_CODE_LISTS) return ELEMENT_CODE_LISTS[name];
  // UBL: the VAT category of a TaxCategory / ClassifiedTaxCategory is its cbc:ID.
  const parent = el.parentNode as Element | null;
  if (name === 'ID' && parent && /TaxCategory$/.test(parent.localName ?? '')) return 'vatCategory';
  // CII TypeCode: a document type under ExchangedDocument, elsewhere mostly a payment means.
  if (name === 'TypeCode') return parent?.localName === 'ExchangedDocument' ? 'invoiceType' : 'paymentMeans';
  return undefined;
}

const MUTATORS: Record<MutationKind, Mutator> = {
  remove(doc, rng) {
    const root = doc.documentElement!;
    // One time in four an attribute goes (schemeID, currencyID, unitCode …), else an element.
    const withAttrs = allElements(doc).filter((e) => attributes(e).length > 0 && e !== root);
    if (withAttrs.length > 0 && rng.next() < 0.25) {
      const el = rng.pick(withAttrs);
      const attr = rng.pick(attributes(el));
      const target = pathOf(attr);
      el.removeAttributeNode(attr);
      return { kind: 'remove', target, detail: 'attribute removed' };
    }
    const candidates = allElements(doc).filter((e) => e !== root);
    if (candidates.length === 0) return undefined;
    const el = rng.pick(candidates);
    const target = pathOf(el);
    el.parentNode!.removeChild(el);
    return { kind: 'remove', target, detail: 'removed' };
  },
  duplicate(doc, rng) {
    const root = doc.documentElement!;
    const candidates = allElements(doc).filter((e) => e !== root);
    if (candidates.length === 0) return undefined;
    const el = rng.pick(candidates);
    const target = pathOf(el);
    el.parentNode!.insertBefore(el.cloneNode(true), el.nextSibling);
    return { kind: 'duplicate', target, detail: 'duplicated in place' };
  },
  reorder(doc, rng) {
    const candidates = allElements(doc).filter((e) => elementChildren(e).length >= 2);
    if (candidates.length === 0) return undefined;
    const parent = rng.pick(candidates);
    const kids = elementChildren(parent);
    const from = rng.int(kids.length);
    let to = rng.int(kids.length - 1);
    if (to >= from) to++;
    const el = kids[from]!;
    const target = pathOf(el);
    parent.removeChild(el);
    // Before the sibling now at `to` (the last position: after every sibling).
    const rest = elementChildren(parent);
    parent.insertBefore(el, to >= rest.length ? null : rest[to]!);
    return { kind: 'reorder', target, detail: `moved from child ${from + 1} to ${to + 1} of ${kids.length}` };
  },
  amount(doc, rng) {
    const numeric = allElements(doc).filter((e) => NUMBER.test((leafText(e) ?? '').trim()));
    const named = numeric.filter((e) => AMOUNT_NAME.test(e.localName ?? ''));
    const candidates = named.length > 0 ? named : numeric;
    if (candidates.length === 0) return undefined;
    const el = rng.pick(candidates);
    const before = leafText(el)!;
    const after = alterAmount(before, rng);
    setText(el, after);
    return { kind: 'amount', target: pathOf(el), detail: `${truncateForDetail(before)} → ${truncateForDetail(after)}` };
  },
  date(doc, rng) {
    const candidates = allElements(doc).filter((e) => {
      const t = (leafText(e) ?? '').trim();
      return ISO_DATE.test(t) || (BASIC_DATE.test(t) && e.localName === 'DateTimeString');
    });
    if (candidates.length === 0) return undefined;
    const el = rng.pick(candidates);
    const before = leafText(el)!;
    const basic = el.localName === 'DateTimeString';
    const after = alterDate(before, basic, rng);
    setText(el, after);
    return { kind: 'date', target: pathOf(el), detail: `${truncateForDetail(before)} → ${truncateForDetail(after)}` };
  },
  code(doc, rng) {
    const targets: Array<{ node: Element | Attr; list: CodeList }> = [];
    for (const el of allElements(doc)) {
      const list = leafText(el) !== undefined ? codeListOfElement(el) : undefined;
      if (list) targets.push({ node: el, list });
      for (const a of attributes(el)) {
        const alist = ATTRIBUTE_CODE_LISTS[a.localName ?? a.name];
        if (alist) targets.push({ node: a, list: alist });
      }
    }
    if (targets.length === 0) return undefined;
    const { node, list } = rng.pick(targets);
    const before = node.nodeType === 2 ? node.value : leafText(node)!;
    const after = alterCode(before.trim(), list, rng);
    if (node.nodeType === 2) node.value = after;
    else setText(node, after);
    return {
      kind: 'code',
      target: pathOf(node),
      detail: `${list}: ${truncateForDetail(before)} → ${truncateForDetail(after)}`,
    };
  },
  identifier(doc, rng) {
    const candidates = allElements(doc).filter(
      (e) => leafText(e) !== undefined && ID_NAME.test(e.localName ?? '') && codeListOfElement(e) === undefined,
    );
    if (candidates.length === 0) return undefined;
    const el = rng.pick(candidates);
    const before = leafText(el)!;
    const after = alterIdentifier(before.trim(), rng);
    setText(el, after);
    return {
      kind: 'identifier',
      target: pathOf(el),
      detail: `${truncateForDetail(before)} → ${truncateForDetail(after)}`,
    };
  },
  lines(doc, rng) {
    const lines = allElements(doc).filter((e) => LINE_NAMES.has(e.localName ?? ''));
    if (lines.length === 0) return undefined;
    const line = rng.pick(lines);
    const siblings = elementChildren(line.parentNode as Element).filter((e) => e.localName === line.localName);
    const last = siblings[siblings.length - 1]!;
    const k = 1 + rng.int(5);
    const ids: string[] = [];
    let anchor: Node = last;
    for (let j = 1; j <= k; j++) {
      const copy = line.cloneNode(true) as Element;
      const id = String(siblings.length + j);
      // UBL: the line's own cbc:ID; CII: AssociatedDocumentLineDocument/LineID.
      const idEl =
        elementChildren(copy).find((c) => c.localName === 'ID') ??
        elementChildren(copy)
          .find((c) => c.localName === 'AssociatedDocumentLineDocument')
          ?.getElementsByTagNameNS('*', 'LineID')
          .item(0);
      if (idEl) setText(idEl, id);
      ids.push(id);
      line.parentNode!.insertBefore(copy, anchor.nextSibling);
      anchor = copy;
    }
    return { kind: 'lines', target: pathOf(line), detail: `×${k} copies (ids ${ids.join(', ')})` };
  },
};

/** Applies one mutation of `kind`; undefined when the document has nothing it could apply to. */
export function applyMutation(doc: Document, kind: MutationKind, rng: Rng): AppliedMutation | undefined {
  return MUTATORS[kind](doc, rng);
}

/** Sources are parsed once; each variant mutates a deep copy. */
const parsed = new Map<string, Document>();
function parsedCopy(xmlText: string): Document {
  let doc = parsed.get(xmlText);
  if (!doc) {
    doc = parseXml(xmlText);
    if (parsed.size > 5000) parsed.clear();
    parsed.set(xmlText, doc);
  }
  return doc.cloneNode(true) as Document;
}

/**
 * Mutates `xmlText` with 1–4 mutations drawn from `rng`; a kind the document offers no target for is replaced by
 * another. Returns the serialized document and what was applied.
 */
export function mutate(xmlText: string, rng: Rng): { xmlText: string; mutations: AppliedMutation[] } {
  const doc = parsedCopy(xmlText);
  const wanted = 1 + rng.int(4);
  const mutations: AppliedMutation[] = [];
  for (let n = 0; n < wanted; n++) {
    const kinds = [...MUTATION_KINDS];
    while (kinds.length > 0) {
      const kind = kinds.splice(rng.int(kinds.length), 1)[0]!;
      const applied = applyMutation(doc, kind, rng);
      if (applied) {
        mutations.push(applied);
        break;
      }
    }
  }
  return { xmlText: new XMLSerializer().serializeToString(doc), mutations };
}

/** Variant `index` of `seed` over `sources` (in the given order). */
export function variant(sources: readonly MutationSource[], seed: number, index: number): Variant {
  if (sources.length === 0) throw new Error('mutation generator: no source documents');
  const rng = createRng(seed, index);
  const total = sources.reduce((n, s) => n + (s.weight ?? 1), 0);
  let r = rng.next() * total;
  const source = sources.find((s) => (r -= s.weight ?? 1) < 0) ?? sources[sources.length - 1]!;
  const { xmlText, mutations } = mutate(source.xmlText, rng);
  return { seed, index, source: source.name, packIds: source.packIds, mutations, xmlText };
}

/** Variants `start` … `start + count - 1` of `seed`. */
export function* variants(
  sources: readonly MutationSource[],
  options: { seed: number; count: number; start?: number },
): Generator<Variant> {
  const start = options.start ?? 0;
  for (let i = start; i < start + options.count; i++) yield variant(sources, options.seed, i);
}

/** One line naming a variant and its mutations, for reports. */
export function describeVariant(v: Variant): string {
  return (
    `variant seed=${v.seed} #${v.index} of ${v.source}: ` +
    v.mutations.map((m) => `${m.kind} ${m.target} (${m.detail})`).join('; ')
  );
}
