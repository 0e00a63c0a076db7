import {
  ATTRIBUTE,
  COMMENT,
  DOCUMENT,
  Dec,
  ELEMENT,
  Flt,
  PI,
  TEXT,
  Unsupported,
  Untyped,
  XPathError,
  XS_NS,
  isNode,
  type Atomic,
  type Item,
  type NodeTest,
  type OtherAtomic,
  type QName,
  type Sequence,
  type SequenceType,
  type XNode,
} from './model';
import { stringValueOf } from './tree';

/**
 * The value semantics of XPath 2.0 without a schema, as SaxonJS 2 (the reference engine) implements them: atomization,
 * effective boolean value, string forms, comparisons, arithmetic, casts and the function conversion rules. Where SaxonJS
 * departs from the specification the departure is kept, because the compiled rules must report exactly what SaxonJS
 * reports: xs:decimal division is rounded half away from zero to 20 fractional digits; an integer on the left of a
 * comparison is compared as a double; a decimal compared with a double or float compares with that number's canonical
 * string form; xs:float's string form follows SaxonJS's own formatting.
 */

// ---------------------------------------------------------------------------------------------------------------------
// Other atomic types

/** xs:date, xs:dateTime, xs:time: the wall-clock time as epoch milliseconds read as UTC, and the timezone (minutes). */
export class DateTimeValue implements OtherAtomic {
  constructor(
    readonly type: 'date' | 'dateTime' | 'time',
    readonly wall: number,
    readonly tz: number | null,
  ) {}
  toString(): string {
    return dateTimeToString(this);
  }
}

/** xs:duration and its two subtypes: months and milliseconds, both with the duration's sign. */
export class DurationValue implements OtherAtomic {
  constructor(
    readonly type: 'duration' | 'dayTimeDuration' | 'yearMonthDuration',
    readonly months: number,
    readonly ms: number,
  ) {}
  toString(): string {
    return durationToString(this);
  }
}

/** xs:anyURI. */
export class AnyUriValue implements OtherAtomic {
  readonly type = 'anyURI';
  constructor(readonly s: string) {}
  toString(): string {
    return this.s;
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Type names

/** The local name of the XML Schema type of an atomic value. */
export function typeOf(a: Atomic): string {
  switch (typeof a) {
    case 'string':
      return 'string';
    case 'number':
      return 'double';
    case 'boolean':
      return 'boolean';
  }
  if (a instanceof Untyped) return 'untypedAtomic';
  if (a instanceof Dec) return a.integer ? 'integer' : 'decimal';
  if (a instanceof Flt) return 'float';
  return a.type;
}

const PARENT: Record<string, string> = {
  integer: 'decimal',
  dayTimeDuration: 'duration',
  yearMonthDuration: 'duration',
};

/** Whether type `t` is `target` or derived from it (anyAtomicType is the root). */
export function derivesFrom(t: string, target: string): boolean {
  if (target === 'anyAtomicType') return true;
  for (let c: string | undefined = t; c; c = PARENT[c]) if (c === target) return true;
  return false;
}

function xsName(t: string): string {
  return `xs:${t}`;
}

// ---------------------------------------------------------------------------------------------------------------------
// Atomization, EBV, string values

const EMPTY: Atomic[] = [];

/** The typed value of a node: xs:untypedAtomic, except comments and processing instructions (xs:string). */
export function atomizeNode(n: XNode): Atomic {
  if (n.kind === COMMENT || n.kind === PI) return n.value;
  return new Untyped(n.kind === ELEMENT || n.kind === DOCUMENT ? stringValueOf(n) : n.value);
}

export function atomizeItem(item: Item): Atomic {
  return isNode(item) ? atomizeNode(item) : item;
}

export function atomize(seq: Sequence): Atomic[] {
  const n = seq.length;
  if (n === 0) return EMPTY;
  if (n === 1) {
    const only = seq[0]!;
    return isNode(only) ? [atomizeNode(only)] : (seq as Atomic[]);
  }
  let out: Atomic[] | undefined;
  for (let k = 0; k < n; k++) {
    const it = seq[k]!;
    if (isNode(it)) {
      out ??= (seq as Atomic[]).slice(0, k);
      out.push(atomizeNode(it));
    } else if (out) out.push(it);
  }
  return out ?? (seq as Atomic[]);
}

/** The effective boolean value (FORG0006 where it is not defined). */
export function ebv(seq: Sequence): boolean {
  const n = seq.length;
  if (n === 0) return false;
  const first = seq[0]!;
  if (typeof first === 'boolean') {
    if (n === 1) return first;
  } else if (typeof first === 'string') {
    if (n === 1) return first.length > 0;
  } else if (typeof first === 'number') {
    if (n === 1) return first !== 0 && !Number.isNaN(first);
  } else if (isNode(first)) return true;
  if (n > 1)
    throw new XPathError('FORG0006', 'Effective boolean value is not defined for an atomic sequence of length > 1');
  if (first instanceof Untyped) return first.s.length > 0;
  if (first instanceof Dec) return first.units !== 0n;
  if (first instanceof Flt) return first.n !== 0 && !Number.isNaN(first.n);
  if (first instanceof AnyUriValue) return first.s.length > 0;
  throw new XPathError('FORG0006', `Effective boolean value is not defined for type ${xsName(typeOf(first))}`);
}

/** The string value of an item (for atomic values: the cast to xs:string). */
export function stringOf(item: Item): string {
  switch (typeof item) {
    case 'string':
      return item;
    case 'number':
      return doubleToString(item);
    case 'boolean':
      return item ? 'true' : 'false';
  }
  if (item instanceof Untyped) return item.s;
  if (isNode(item)) return stringValueOf(item);
  if (item instanceof Dec) return decToString(item);
  if (item instanceof Flt) return floatToString(item.n);
  return otherString(item);
}

/** The string form of a date, time, duration or anyURI value. */
export function otherString(a: OtherAtomic): string {
  if (a instanceof DateTimeValue || a instanceof DurationValue || a instanceof AnyUriValue) return a.toString();
  throw new Unsupported(`the string value of xs:${a.type}`);
}

/** fn:number applied to one item (undefined: the empty sequence): an xs:double, NaN where it is not a number. */
export function numberOf(item: Item | undefined): number {
  if (item === undefined) return NaN;
  const a = isNode(item) ? atomizeNode(item) : item;
  switch (typeof a) {
    case 'number':
      return a;
    case 'string':
      return parseDouble(a) ?? NaN;
    case 'boolean':
      return a ? 1 : 0;
  }
  if (a instanceof Untyped) return parseDouble(a.s) ?? NaN;
  if (a instanceof Dec) return decToNumber(a);
  if (a instanceof Flt) return a.n;
  return NaN;
}

// ---------------------------------------------------------------------------------------------------------------------
// Numbers: lexical forms and canonical strings

const XML_TRIM = /^[ \t\r\n]+|[ \t\r\n]+$/g;
const DOUBLE_LEX = /^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([Ee][-+]?[0-9]+)?$/;

/** xs:double's lexical space as SaxonJS reads it (XML whitespace trimmed, `+INF` accepted); undefined if invalid. */
export function parseDouble(s: string): number | undefined {
  let t = s;
  if (t.length === 0 || isXmlSpace(t.charCodeAt(0)) || isXmlSpace(t.charCodeAt(t.length - 1)))
    t = t.replace(XML_TRIM, '');
  if (DOUBLE_LEX.test(t)) return parseFloat(t);
  switch (t) {
    case 'NaN':
      return NaN;
    case '-INF':
      return -Infinity;
    case 'INF':
    case '+INF':
      return Infinity;
  }
  return undefined;
}

function isXmlSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** The canonical string of an xs:double (1.0E7, 1.0E-7, 100000, 0.1, -0, INF, NaN). */
export function doubleToString(v: number): string {
  if (v === 0) return 1 / v < 0 ? '-0' : '0';
  const b = Math.abs(v);
  if (b >= 1e6 || b < 1e-6) {
    if (v === Infinity) return 'INF';
    if (v === -Infinity) return '-INF';
    const e = v.toExponential();
    const h = e.indexOf('e');
    let m = e.substring(0, h);
    if (!m.includes('.')) m += '.0';
    return m + 'E' + e.substring(h + 1).replace('+', '');
  }
  return String(v);
}

/** The string of an xs:float, as SaxonJS formats it (five fractional digits, seven in exponent form). */
export function floatToString(v: number): string {
  if (v === 0) return 1 / v < 0 ? '-0' : '0';
  if (v === Infinity) return 'INF';
  if (v === -Infinity) return '-INF';
  if (Number.isNaN(v)) return 'NaN';
  const b = Math.abs(v);
  if (b >= 1e6 || b < 1e-6) {
    const e = v.toExponential();
    const h = e.indexOf('e');
    const mf = parseFloat(e.substring(0, h));
    let m = String(mf < 0 ? mf - 5e-8 : mf + 5e-8);
    m = m.substring(0, m.indexOf('.') + 8).replace(/\.?0+$/, '');
    if (!m.includes('.')) m += '.0';
    return m + 'E' + e.substring(h + 1).replace('+', '');
  }
  if (v % 1 !== 0) {
    const s = String(v < 0 ? v - 5e-8 : v + 5e-8);
    return s.substring(0, s.indexOf('.') + 6).replace(/\.?0+$/, '');
  }
  return String(v);
}

// ---------------------------------------------------------------------------------------------------------------------
// Decimals (exact: bigint units × 10^-scale, normalized without trailing fractional zeros)

const POW10: bigint[] = [1n];
function pow10(n: number): bigint {
  for (let k = POW10.length; k <= n; k++) POW10.push(POW10[k - 1]! * 10n);
  return POW10[n]!;
}

const INT_CACHE: Dec[] = [];
for (let k = 0; k <= 256; k++) INT_CACHE.push(new Dec(BigInt(k), 0, true));

/** An xs:integer from a safe JS integer. */
export function intOf(n: number): Dec {
  if (n >= 0 && n <= 256 && Number.isInteger(n)) return INT_CACHE[n]!;
  return new Dec(BigInt(n), 0, true);
}

export function integerOf(units: bigint): Dec {
  return units >= 0n && units <= 256n ? INT_CACHE[Number(units)]! : new Dec(units, 0, true);
}

/** A normalized xs:decimal (integer flag off). */
export function decOf(units: bigint, scale: number): Dec {
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  if (scale < 0) {
    units *= pow10(-scale);
    scale = 0;
  }
  return new Dec(units, scale, false);
}

export function decToString(d: Dec): string {
  if (d.scale === 0) return d.units.toString();
  const neg = d.units < 0n;
  let s = (neg ? -d.units : d.units).toString();
  if (s.length <= d.scale) s = '0'.repeat(d.scale - s.length + 1) + s;
  const p = s.length - d.scale;
  return (neg ? '-' : '') + s.substring(0, p) + '.' + s.substring(p);
}

export function decToNumber(d: Dec): number {
  if (d.scale === 0 && d.units <= 9007199254740991n && d.units >= -9007199254740991n) return Number(d.units);
  return parseFloat(decToString(d));
}

/** Parses a decimal in JS number syntax (digits, optional fraction, optional exponent); undefined if invalid. */
function parseDecimalLoose(s: string): Dec | undefined {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const frac = m[3] ?? '';
  let units = BigInt((m[2] || '0') + frac);
  if (m[1] === '-') units = -units;
  let scale = frac.length;
  if (m[4]) scale -= parseInt(m[4], 10);
  return decOf(units, scale);
}

/** xs:decimal from a JS number, as SaxonJS does it: from the number's shortest string form. */
function decFromNumber(n: number, to: string): Dec {
  if (!Number.isFinite(n))
    throw new XPathError('FOCA0002', `Supplied value "${doubleToString(n)}" is not a valid ${xsName(to)}`);
  if (Number.isSafeInteger(n)) return new Dec(BigInt(n), 0, false);
  return parseDecimalLoose(String(n))!;
}

const DEC_LEX = /^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/;

export function parseDecimal(s: string): Dec | undefined {
  const t = s.replace(XML_TRIM, '');
  if (!DEC_LEX.test(t)) return undefined;
  return parseDecimalLoose(t);
}

const INT_LEX = /^\s*[-+]?[0-9]+\s*$/;

export function parseInteger(s: string): Dec | undefined {
  if (!INT_LEX.test(s)) return undefined;
  const t = s.trim();
  return integerOf(BigInt(t.charCodeAt(0) === 43 ? t.substring(1) : t));
}

function decCompare(a: Dec, b: Dec): number {
  if (a.scale === b.scale) return a.units < b.units ? -1 : a.units > b.units ? 1 : 0;
  const s = Math.max(a.scale, b.scale);
  const x = a.units * pow10(s - a.scale);
  const y = b.units * pow10(s - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

function align(a: Dec, b: Dec): [bigint, bigint, number] {
  if (a.scale === b.scale) return [a.units, b.units, a.scale];
  const s = Math.max(a.scale, b.scale);
  return [a.units * pow10(s - a.scale), b.units * pow10(s - b.scale), s];
}

const DIV_SCALE = 20;

/** Decimal division as SaxonJS computes it: rounded half away from zero to 20 fractional digits. */
function decDiv20(a: Dec, b: Dec): Dec {
  if (b.units === 0n) throw new XPathError('FOAR0001', 'Division by zero');
  // a/b = (ua × 10^sb) / (ub × 10^sa); scaled by 10^20.
  let num = a.units * pow10(b.scale + DIV_SCALE);
  let den = b.units;
  if (a.scale > 0) den *= pow10(a.scale);
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  let q = num / den;
  const r = num % den;
  if (r !== 0n) {
    const r2 = (r < 0n ? -r : r) * 2n;
    if (r2 >= den) q += num < 0n ? -1n : 1n;
  }
  return decOf(q, DIV_SCALE);
}

// ---------------------------------------------------------------------------------------------------------------------
// Arithmetic

type ArithOp = '+' | '-' | '*' | 'div' | 'idiv' | 'mod';

const TWO52 = 4503599627370496;

/** 0 integer, 1 decimal, 2 float, 3 double, -1 not numeric. */
function numKind(a: Atomic): number {
  if (typeof a === 'number') return 3;
  if (a instanceof Dec) return a.integer ? 0 : 1;
  if (a instanceof Flt) return 2;
  return -1;
}

function toNum(a: Atomic): number {
  if (typeof a === 'number') return a;
  if (a instanceof Flt) return a.n;
  return decToNumber(a as Dec);
}

function untypedToDouble(u: Untyped): number {
  const d = parseDouble(u.s);
  if (d === undefined) throw new XPathError('FORG0001', `Supplied value "${u.s}" is not a valid xs:double`);
  return d;
}

function arithError(op: string, a: Atomic, b: Atomic): never {
  throw new XPathError(
    'XPTY0004',
    `Arithmetic operation ${op} not available for operands ${xsName(typeOf(a))} and ${xsName(typeOf(b))}`,
  );
}

/** The arithmetic operators on two sequences (empty operand: empty result). */
export function arithmetic(op: ArithOp, l: Sequence, r: Sequence): Sequence {
  if (l.length === 0 || r.length === 0) return EMPTY;
  const la = atomize(l);
  const ra = atomize(r);
  if (la.length > 1 || ra.length > 1)
    throw new XPathError('XPTY0004', `A sequence of more than one item is not allowed as an operand of ${op}`);
  return [arithAtomic(op, la[0]!, ra[0]!)];
}

export function arithAtomic(op: ArithOp, a: Atomic, b: Atomic): Atomic {
  if (typeof a === 'number' && typeof b === 'number') return doubleOp(op, a, b);
  if (a instanceof Untyped) a = untypedToDouble(a);
  if (b instanceof Untyped) b = untypedToDouble(b);
  const ka = numKind(a);
  const kb = numKind(b);
  if (ka < 0 || kb < 0) return temporalOp(op, a, b);
  if (ka === 0 && kb === 0) return integerOp(op, a as Dec, b as Dec);
  if (ka === 3 || kb === 3) return doubleOp(op, toNum(a), toNum(b));
  if (ka === 2 || kb === 2) return floatOp(op, toNum(a), toNum(b));
  return decimalOp(op, a as Dec, b as Dec);
}

/** Arithmetic on durations and dates: sums and differences of durations of one kind; the rest is Unsupported. */
function temporalOp(op: ArithOp, a: Atomic, b: Atomic): Atomic {
  if (a instanceof DurationValue && b instanceof DurationValue && a.type === b.type && a.type !== 'duration') {
    if (op === '+' || op === '-') {
      const sign = op === '+' ? 1 : -1;
      return new DurationValue(a.type, a.months + sign * b.months, a.ms + sign * b.ms);
    }
  }
  const temporal = (x: Atomic): boolean => x instanceof DurationValue || x instanceof DateTimeValue;
  const valid =
    (temporal(a) && temporal(b) && !(a instanceof DateTimeValue && b instanceof DateTimeValue && op === '+')) ||
    (a instanceof DurationValue && numKind(b) >= 0 && (op === '*' || op === 'div')) ||
    (b instanceof DurationValue && numKind(a) >= 0 && op === '*');
  if (valid && (op === '+' || op === '-' || op === '*' || op === 'div'))
    throw new Unsupported(`arithmetic on ${xsName(typeOf(a))} and ${xsName(typeOf(b))}`);
  return arithError(op, a, b);
}

function doubleOp(op: ArithOp, x: number, y: number): Atomic {
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case 'div':
      return x / y;
    case 'mod':
      return x % y;
    case 'idiv':
      return idivNumber(x, y, false);
  }
}

/** Float arithmetic: both operands are first converted to xs:float, as SaxonJS does. */
function floatOp(op: ArithOp, x: number, y: number): Atomic {
  x = Math.fround(x);
  y = Math.fround(y);
  switch (op) {
    case '+':
      return new Flt(Math.fround(x + y));
    case '-':
      return new Flt(Math.fround(x - y));
    case '*':
      return new Flt(Math.fround(x * y));
    case 'div':
      return new Flt(Math.fround(x / y));
    case 'mod':
      return new Flt(Math.fround(x % y));
    case 'idiv':
      return idivNumber(x, y, true);
  }
}

function idivNumber(x: number, y: number, float: boolean): Atomic {
  if (y === 0) throw new XPathError('FOAR0001', 'Division by zero');
  if ((!Number.isFinite(x) && Number.isFinite(y)) || Number.isNaN(x) || Number.isNaN(y))
    throw new XPathError('FOAR0002', 'Numeric overflow/underflow');
  const q = Math.trunc(x / y);
  if (!Number.isFinite(q)) throw new XPathError('FOAR0002', 'Numeric overflow/underflow');
  if (Math.abs(q) < TWO52) return intOf(q === 0 ? 0 : q);
  return float ? new Flt(Math.fround(q)) : q;
}

function integerOp(op: ArithOp, a: Dec, b: Dec): Atomic {
  switch (op) {
    case '+':
      return integerOf(a.units + b.units);
    case '-':
      return integerOf(a.units - b.units);
    case '*':
      return integerOf(a.units * b.units);
    case 'div':
      return decDiv20(a, b);
    case 'idiv': {
      const q = decToNumber(a) / decToNumber(b);
      if (!Number.isFinite(q)) throw new XPathError('FOAR0001', 'Division by zero');
      if (Math.abs(q) < TWO52) return intOf(Math.trunc(q) || 0);
      const d = decDiv20(a, b);
      return integerOf(d.units / pow10(d.scale));
    }
    case 'mod': {
      const x = decToNumber(a);
      const y = decToNumber(b);
      if (y === 0) throw new XPathError('FOAR0001', 'Division by zero');
      if (!Number.isFinite(y) || x === 0) return a;
      const m = x % y;
      if (Math.abs(m) < TWO52) return intOf(m || 0);
      return integerOf(a.units % b.units);
    }
  }
}

function decimalOp(op: ArithOp, a: Dec, b: Dec): Atomic {
  switch (op) {
    case '+': {
      const [x, y, s] = align(a, b);
      return decOf(x + y, s);
    }
    case '-': {
      const [x, y, s] = align(a, b);
      return decOf(x - y, s);
    }
    case '*':
      return decOf(a.units * b.units, a.scale + b.scale);
    case 'div':
      return decDiv20(a, b);
    case 'idiv': {
      const d = decDiv20(a, b);
      return integerOf(d.units / pow10(d.scale));
    }
    case 'mod': {
      if (b.units === 0n) throw new XPathError('FOAR0001', 'Division by zero');
      const [x, y, s] = align(a, b);
      return decOf(x % y, s);
    }
  }
}

export function unaryMinus(s: Sequence): Sequence {
  if (s.length === 0) return EMPTY;
  const a = singleAtomic(s, 'unary minus');
  if (typeof a === 'number') return [-a];
  if (a instanceof Untyped) return [-untypedToDouble(a)];
  if (a instanceof Dec) return [a.integer ? integerOf(-a.units) : new Dec(-a.units, a.scale, false)];
  if (a instanceof Flt) return [new Flt(-a.n)];
  throw new XPathError('XPTY0004', `Unary minus is not available for ${xsName(typeOf(a))}`);
}

export function unaryPlus(s: Sequence): Sequence {
  if (s.length === 0) return EMPTY;
  const a = singleAtomic(s, 'unary plus');
  if (a instanceof Untyped) return [untypedToDouble(a)];
  if (numKind(a) < 0) throw new XPathError('XPTY0004', `Unary plus is not available for ${xsName(typeOf(a))}`);
  return [a];
}

function singleAtomic(s: Sequence, what: string): Atomic {
  const a = atomize(s);
  if (a.length > 1)
    throw new XPathError('XPTY0004', `A sequence of more than one item is not allowed as the operand of ${what}`);
  return a[0]!;
}

/** `l to r`: the integers from l to r (empty when l > r or either is empty). */
export function rangeTo(l: Sequence, r: Sequence): Sequence {
  if (l.length === 0 || r.length === 0) return EMPTY;
  const from = toRangeInt(singleAtomic(l, 'to'));
  const to = toRangeInt(singleAtomic(r, 'to'));
  if (from > to) return EMPTY;
  const out: Dec[] = [];
  for (let k = from; k <= to; k++) out.push(intOf(k));
  return out;
}

function toRangeInt(a: Atomic): number {
  const v = a instanceof Untyped ? castAtomic(a, 'integer') : a;
  if (!(v instanceof Dec) || !v.integer)
    throw new XPathError(
      'XPTY0004',
      `Required item type of the operands of 'to' is xs:integer; supplied ${xsName(typeOf(v))}`,
    );
  return decToNumber(v);
}

// ---------------------------------------------------------------------------------------------------------------------
// Comparisons

type GeneralOp = '=' | '!=' | '<' | '<=' | '>' | '>=';
type ValueOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

/** Codepoint order of two strings (UTF-16 order differs only where surrogate pairs meet U+E000..U+FFFF). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let k = 0; k < n; k++) {
    const x = a.charCodeAt(k);
    const y = b.charCodeAt(k);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        const cx = a.codePointAt(k)!;
        const cy = b.codePointAt(k)!;
        return cx < cy ? -1 : 1;
      }
      return x < y ? -1 : 1;
    }
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

function cannotCompare(a: Atomic, b: Atomic): never {
  throw new XPathError('XPTY0004', `Cannot compare ${xsName(typeOf(a))} with ${xsName(typeOf(b))}`);
}

function isStringLike(a: Atomic): a is string | Untyped | AnyUriValue {
  return typeof a === 'string' || a instanceof Untyped || a instanceof AnyUriValue;
}

function strOf(a: string | Untyped | AnyUriValue): string {
  return typeof a === 'string' ? a : a.s;
}

function isNaNValue(a: Atomic): boolean {
  return (typeof a === 'number' && Number.isNaN(a)) || (a instanceof Flt && Number.isNaN(a.n));
}

/** A decimal read from the canonical string of a double or float (what SaxonJS compares decimals with). */
function decFromNumericString(a: Atomic): Dec {
  const s = typeof a === 'number' ? doubleToString(a) : floatToString((a as Flt).n);
  const d = parseDecimalLoose(s.replace('E', 'e'));
  if (!d) throw new XPathError('FOER0000', 'NaN');
  return d;
}

const SAFE = 9007199254740991n;

/**
 * Compares two atomic values of comparable types: negative, zero, positive, or NaN when unordered (NaN operands).
 * `ordering` rejects types that have only equality.
 */
export function compareAtomic(a: Atomic, b: Atomic, ordering: boolean): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : a === b ? 0 : NaN;
  const ka = numKind(a);
  const kb = numKind(b);
  if (ka >= 0 && kb >= 0) {
    if (isNaNValue(a) || isNaNValue(b)) return NaN;
    let x: number;
    let y: number;
    switch (ka) {
      case 0:
      case 1: {
        const da = a as Dec;
        const safe = da.units <= SAFE && da.units >= -SAFE;
        // SaxonJS orders two integers beyond 2^53 as "less than" whatever their values.
        if (ka === 0 && kb === 0 && !safe && ((b as Dec).units > SAFE || (b as Dec).units < -SAFE)) return -1;
        if (ka === 0 && safe) {
          x = Number(da.units);
          y = toNum(b);
          break;
        }
        const db = kb <= 1 ? (b as Dec) : decFromNumericString(b);
        return decCompare(da, db);
      }
      case 2:
        x = (a as Flt).n;
        y = Math.fround(toNum(b));
        break;
      default:
        x = a as number;
        y = toNum(b);
    }
    return x < y ? -1 : x > y ? 1 : x === y ? 0 : NaN;
  }
  if (isStringLike(a) && isStringLike(b)) return compareStrings(strOf(a), strOf(b));
  if (typeof a === 'boolean' && typeof b === 'boolean') return (a ? 1 : 0) - (b ? 1 : 0);
  if (a instanceof DateTimeValue && b instanceof DateTimeValue && a.type === b.type) {
    const x = instantOf(a);
    const y = instantOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a instanceof DurationValue && b instanceof DurationValue) {
    if (a.type === 'yearMonthDuration' && b.type === 'yearMonthDuration') return a.months - b.months;
    if (a.type === 'dayTimeDuration' && b.type === 'dayTimeDuration') return a.ms - b.ms;
    if (ordering) throw new XPathError('XPTY0004', 'Cannot compare durations that mix months and seconds');
    return a.months === b.months && a.ms === b.ms ? 0 : 1;
  }
  return cannotCompare(a, b);
}

function holds(op: GeneralOp, c: number): boolean {
  switch (op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

const VALUE_TO_GENERAL: Record<ValueOp, GeneralOp> = { eq: '=', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=' };

/** One pair of a general comparison, after the untypedAtomic conversions of XPath 2.0. */
function generalPair(op: GeneralOp, a: Atomic, b: Atomic): boolean {
  let viaDouble = false;
  if (a instanceof Untyped) {
    if (b instanceof Untyped || typeof b === 'string' || b instanceof AnyUriValue) a = a.s;
    else if (numKind(b) >= 0) {
      a = untypedToDouble(a);
      viaDouble = true;
    } else a = castAtomic(a, typeOf(b));
  } else if (b instanceof Untyped) {
    if (typeof a === 'string' || a instanceof AnyUriValue) b = b.s;
    else if (numKind(a) >= 0) {
      b = untypedToDouble(b);
      viaDouble = true;
    } else b = castAtomic(b, typeOf(a));
  }
  if (typeof a !== typeof b && (typeof a === 'string' || typeof b === 'string')) {
    if (!(isStringLike(a) && isStringLike(b))) incomparable(a, b);
  }
  if (a instanceof DurationValue && b instanceof DurationValue && a.type !== b.type) incomparable(a, b);
  const c = compareAtomic(a, b, op !== '=' && op !== '!=');
  // SaxonJS: an untypedAtomic operand read as a double that compares unordered (NaN) makes every operator false.
  if (viaDouble && Number.isNaN(c)) return false;
  return holds(op, c);
}

function nanComparable(a: Atomic): boolean {
  return numKind(a) >= 0 || a instanceof Untyped || a instanceof AnyUriValue || a instanceof DurationValue;
}

function incomparable(a: Atomic, b: Atomic): never {
  throw new XPathError('XPTY0004', `Cannot compare items of types ${xsName(typeOf(a))} and ${xsName(typeOf(b))}`);
}

/** A general comparison (existential over both atomized operands). */
export function generalCompare(op: GeneralOp, l: Sequence, r: Sequence): boolean {
  const nl = l.length;
  const nr = r.length;
  if (nl === 0 || nr === 0) return false;
  if (nl === 1 && nr === 1) {
    const x = l[0]!;
    const y = r[0]!;
    if (typeof x === 'string' && typeof y === 'string') return holds(op, x === y ? 0 : compareStrings(x, y));
    return generalPair(op, atomizeItem(x), atomizeItem(y));
  }
  const la = atomize(l);
  const ra = atomize(r);
  for (const a of la) for (const b of ra) if (generalPair(op, a, b)) return true;
  return false;
}

/** A value comparison: [] when an operand is empty, else [boolean]; untypedAtomic compares as xs:string. */
export function valueCompare(op: ValueOp, l: Sequence, r: Sequence): Sequence {
  if (l.length === 0 || r.length === 0) return EMPTY;
  let a = singleAtomic(l, op);
  let b = singleAtomic(r, op);
  // SaxonJS: NaN is unequal to any number, untypedAtomic, anyURI or duration in a value comparison.
  if ((isNaNValue(a) && nanComparable(b)) || (isNaNValue(b) && nanComparable(a))) return [op === 'ne'];
  if (a instanceof Untyped) a = a.s;
  if (b instanceof Untyped) b = b.s;
  if (a instanceof DurationValue && b instanceof DurationValue && (op === 'eq' || op === 'ne'))
    return [(a.months === b.months && a.ms === b.ms) === (op === 'eq')];
  return [holds(VALUE_TO_GENERAL[op], compareAtomic(a, b, op !== 'eq' && op !== 'ne'))];
}

// ---------------------------------------------------------------------------------------------------------------------
// Dates, times, durations

function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

const DAY = 86400000;
const TIME_BASE = daysFromCivil(1972, 1, 1) * DAY;

function instantOf(v: DateTimeValue): number {
  const tz = v.tz ?? -new Date(v.wall).getTimezoneOffset();
  return v.wall - tz * 60000;
}

const DATE_RE = /^\s*(-?(?:[1-9][0-9]{4,}|[0-9]{4}))-([0-9]{2})-([0-9]{2})(Z|[+-][0-9]{2}:[0-9]{2})?\s*$/;
const DATETIME_RE =
  /^\s*(-?(?:[1-9][0-9]{4,}|[0-9]{4}))-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)(Z|[+-][0-9]{2}:[0-9]{2})?\s*$/;
const TIME_RE = /^\s*([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)(Z|[+-][0-9]{2}:[0-9]{2})?\s*$/;

function parseTz(s: string | undefined, input: string, type: string): number | null {
  if (!s) return null;
  if (s === 'Z') return 0;
  const h = parseInt(s.substring(1, 3), 10);
  const m = parseInt(s.substring(4, 6), 10);
  if (h > 14 || m > 59) throw new XPathError('FORG0001', `Supplied value "${input}" is not a valid ${xsName(type)}`);
  return (s[0] === '-' ? -1 : 1) * (h * 60 + m);
}

function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
}

function badLexical(s: string, type: string): never {
  throw new XPathError('FORG0001', `Supplied value "${s}" is not a valid ${xsName(type)}`);
}

export function parseDateTime(s: string, type: 'date' | 'dateTime' | 'time'): DateTimeValue {
  let y = 1972;
  let mo = 1;
  let d = 1;
  let h = 0;
  let mi = 0;
  let sec = 0;
  let tzs: string | undefined;
  if (type === 'time') {
    const m = TIME_RE.exec(s);
    if (!m) badLexical(s, type);
    h = +m[1]!;
    mi = +m[2]!;
    sec = parseFloat(m[3]!);
    tzs = m[4];
  } else {
    const m = (type === 'date' ? DATE_RE : DATETIME_RE).exec(s);
    if (!m) badLexical(s, type);
    y = parseInt(m[1]!, 10);
    mo = +m[2]!;
    d = +m[3]!;
    if (type === 'dateTime') {
      h = +m[4]!;
      mi = +m[5]!;
      sec = parseFloat(m[6]!);
      tzs = m[7];
    } else tzs = m[4];
  }
  if (y < -9999 || y > 9999) throw new XPathError('FODT0001', `Year ${y} is out of range`);
  const tz = parseTz(tzs, s, type);
  let extraDay = 0;
  if (h === 24 && mi === 0 && sec === 0) {
    h = 0;
    if (type === 'dateTime') extraDay = 1;
  }
  if (!validDate(y, mo, d) || h >= 24 || mi >= 60 || sec >= 60) badLexical(s, type === 'time' ? type : 'dateTime');
  const whole = Math.floor(sec);
  const ms = Math.round(1000 * (sec - whole));
  const day = type === 'time' ? TIME_BASE / DAY : daysFromCivil(y, mo, d) + extraDay;
  return new DateTimeValue(type, day * DAY + ((h * 60 + mi) * 60 + whole) * 1000 + ms, tz);
}

function pad(n: number, w: number): string {
  const s = String(n);
  return s.length >= w ? s : '0'.repeat(w - s.length) + s;
}

function tzToString(tz: number | null): string {
  if (tz === null) return '';
  if (tz === 0) return 'Z';
  const a = Math.abs(tz);
  return (tz < 0 ? '-' : '+') + pad(Math.floor(a / 60), 2) + ':' + pad(a % 60, 2);
}

function dateTimeToString(v: DateTimeValue): string {
  const days = Math.floor(v.wall / DAY);
  const rest = v.wall - days * DAY;
  const [y, m, d] = civilFromDays(days);
  const date = (y < 0 ? '-' + pad(-y, 4) : pad(y, 4)) + '-' + pad(m, 2) + '-' + pad(d, 2);
  const msPart = rest % 1000;
  const secs = Math.floor(rest / 1000);
  let time = pad(Math.floor(secs / 3600), 2) + ':' + pad(Math.floor(secs / 60) % 60, 2) + ':' + pad(secs % 60, 2);
  if (msPart !== 0) time += ('.' + pad(msPart, 3)).replace(/0+$/, '');
  const tz = tzToString(v.tz);
  if (v.type === 'date') return date + tz;
  if (v.type === 'time') return time + tz;
  return date + 'T' + time + tz;
}

const DURATION_RE =
  /^\s*(-)?P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?\s*$/;

export function parseDuration(s: string, type: 'duration' | 'dayTimeDuration' | 'yearMonthDuration'): DurationValue {
  const m = DURATION_RE.exec(s);
  if (!m || !/\d/.test(s) || /T\s*$/.test(s)) badLexical(s, type);
  if (type === 'dayTimeDuration' && (m[2] || m[3])) badLexical(s, type);
  if (type === 'yearMonthDuration' && (m[4] || m[5] || m[6] || m[7] || s.includes('T'))) badLexical(s, type);
  const sign = m[1] ? -1 : 1;
  const months = (m[2] ? parseInt(m[2], 10) * 12 : 0) + (m[3] ? parseInt(m[3], 10) : 0);
  const ms =
    (m[4] ? parseInt(m[4], 10) * DAY : 0) +
    (m[5] ? parseInt(m[5], 10) * 3600000 : 0) +
    (m[6] ? parseInt(m[6], 10) * 60000 : 0) +
    (m[7] ? Math.round(1000 * parseFloat(m[7])) : 0);
  return new DurationValue(type, sign * months || 0, sign * ms || 0);
}

function durationToString(v: DurationValue): string {
  const sign = Math.sign(v.months + v.ms);
  if (sign === 0) return v.type === 'yearMonthDuration' ? 'P0M' : 'PT0S';
  let out = sign < 0 ? '-P' : 'P';
  const mo = Math.abs(v.months);
  let ms = Math.abs(v.ms);
  const parts = [Math.floor(mo / 12), mo % 12];
  for (const q of [DAY, 3600000, 60000]) {
    parts.push(Math.floor(ms / q));
    ms %= q;
  }
  parts.push(ms / 1000);
  const units = 'YMDHMS';
  parts.forEach((n, k) => {
    if (k === 3) out += 'T';
    if (n !== 0) out += String(n) + units[k];
  });
  return out.replace(/T$/, '');
}

/** fn:adjust-dateTime-to-timezone (and the date/time variants) with a timezone argument (empty: remove it). */
export function adjustToTimezone(v: DateTimeValue, tz: DurationValue | undefined): DateTimeValue {
  if (tz === undefined) return new DateTimeValue(v.type, v.wall, null);
  if (tz.type !== 'dayTimeDuration') throw new XPathError('XPTY0004', 'The timezone must be an xs:dayTimeDuration');
  const minutes = tz.ms / 60000;
  if (!Number.isInteger(minutes) || Math.abs(minutes) > 14 * 60)
    throw new XPathError('FODT0003', `Invalid timezone ${durationToString(tz)}`);
  if (v.tz === null) return new DateTimeValue(v.type, v.wall, minutes);
  let wall = v.wall + (minutes - v.tz) * 60000;
  if (v.type === 'time') wall = TIME_BASE + ((((wall - TIME_BASE) % DAY) + DAY) % DAY);
  return new DateTimeValue(v.type, wall, minutes);
}

/** The current dateTime as SaxonJS gives it: the clock in the process's local timezone. */
export function currentDateTime(now: Date): DateTimeValue {
  const tz = -now.getTimezoneOffset();
  return new DateTimeValue('dateTime', now.getTime() + tz * 60000, tz);
}

// ---------------------------------------------------------------------------------------------------------------------
// Casts

/** The atomic types casts (and the xs: constructor functions) support. */
export const CAST_TARGETS: ReadonlySet<string> = new Set([
  'string',
  'untypedAtomic',
  'boolean',
  'decimal',
  'integer',
  'double',
  'float',
  'date',
  'dateTime',
  'time',
  'duration',
  'dayTimeDuration',
  'yearMonthDuration',
  'anyURI',
]);

function castNotAllowed(a: Atomic, to: string): never {
  throw new XPathError('XPTY0004', `Casting from ${xsName(typeOf(a))} to ${xsName(to)} is not allowed`);
}

/** Casts one atomic value to the XML Schema type `to` (a local name in the xs namespace). */
export function castAtomic(a: Atomic, to: string): Atomic {
  if (!CAST_TARGETS.has(to)) throw new Unsupported(`cast to xs:${to}`);
  // SaxonJS rounds values to xs:float with its own (lossy) conversion, which is not reproduced here.
  if (to === 'float' && !(a instanceof Flt)) throw new Unsupported('conversion to xs:float');
  const from = typeOf(a);
  if (from === to) return a;
  switch (to) {
    case 'string':
      return stringOf(a);
    case 'untypedAtomic':
      return new Untyped(stringOf(a));
    case 'anyURI':
      if (typeof a === 'string' || a instanceof Untyped)
        return new AnyUriValue(
          strOf(a)
            .replace(/[ \r\t\n]+/g, ' ')
            .replace(/^ | $/g, ''),
        );
      return castNotAllowed(a, to);
  }
  if (typeof a === 'string' || a instanceof Untyped) return castFromString(strOf(a), to);
  switch (to) {
    case 'boolean':
      if (typeof a === 'number') return a !== 0 && !Number.isNaN(a);
      if (a instanceof Flt) return a.n !== 0 && !Number.isNaN(a.n);
      if (a instanceof Dec) return a.units !== 0n;
      return castNotAllowed(a, to);
    case 'double':
      if (typeof a === 'boolean') return a ? 1 : 0;
      if (numKind(a) >= 0) return toNum(a);
      return castNotAllowed(a, to);
    case 'float':
      if (typeof a === 'boolean') return new Flt(a ? 1 : 0);
      if (numKind(a) >= 0) return new Flt(Math.fround(toNum(a)));
      return castNotAllowed(a, to);
    case 'decimal':
      if (typeof a === 'boolean') return new Dec(a ? 1n : 0n, 0, false);
      if (a instanceof Dec) return new Dec(a.units, a.scale, false);
      if (typeof a === 'number' || a instanceof Flt) {
        const d = decFromNumber(toNum(a), 'decimal');
        return d.units === 0n ? new Dec(0n, 0, false) : d;
      }
      return castNotAllowed(a, to);
    case 'integer':
      if (typeof a === 'boolean') return intOf(a ? 1 : 0);
      if (a instanceof Dec) return integerOf(a.scale === 0 ? a.units : a.units / pow10(a.scale));
      if (typeof a === 'number' || a instanceof Flt) {
        const n = Math.trunc(toNum(a));
        if (!Number.isFinite(n))
          throw new XPathError('FOCA0002', `Supplied value "${String(n)}" is not a valid xs:integer`);
        if (Number.isSafeInteger(n)) return intOf(n || 0);
        const d = parseDecimalLoose(String(n))!;
        return integerOf(d.units);
      }
      return castNotAllowed(a, to);
    case 'date':
    case 'dateTime':
    case 'time':
      if (a instanceof DateTimeValue && (a.type === 'dateTime' || to === 'dateTime') && a.type !== 'time') {
        if (to === 'date') return new DateTimeValue('date', Math.floor(a.wall / DAY) * DAY, a.tz);
        if (to === 'time') return new DateTimeValue('time', TIME_BASE + (((a.wall % DAY) + DAY) % DAY), a.tz);
        return new DateTimeValue('dateTime', a.wall, a.tz);
      }
      return castNotAllowed(a, to);
    case 'duration':
    case 'dayTimeDuration':
    case 'yearMonthDuration':
      if (a instanceof DurationValue) {
        if (to === 'duration') return a;
        if (to === 'dayTimeDuration') return new DurationValue(to, 0, a.ms);
        return new DurationValue(to, a.months, 0);
      }
      return castNotAllowed(a, to);
  }
  return castNotAllowed(a, to);
}

function castFromString(s: string, to: string): Atomic {
  switch (to) {
    case 'boolean': {
      const t = s.replace(XML_TRIM, '');
      if (t === 'true' || t === '1') return true;
      if (t === 'false' || t === '0') return false;
      return badLexical(s, to);
    }
    case 'double': {
      const d = parseDouble(s);
      return d === undefined ? badLexical(s, to) : d;
    }
    case 'float': {
      const d = parseDouble(s);
      return d === undefined ? badLexical(s, to) : new Flt(Math.fround(d));
    }
    case 'decimal':
      return parseDecimal(s) ?? badLexical(s, to);
    case 'integer':
      return parseInteger(s) ?? badLexical(s, to);
    case 'date':
    case 'dateTime':
    case 'time':
      return parseDateTime(s, to);
    case 'duration':
    case 'dayTimeDuration':
    case 'yearMonthDuration':
      return parseDuration(s, to);
  }
  throw new Unsupported(`cast to xs:${to}`);
}

function targetOf(type: QName): string {
  if (type.ns !== XS_NS) throw new XPathError('XPST0051', `Unknown atomic type Q{${type.ns}}${type.local}`);
  if (type.local === 'anyAtomicType' || type.local === 'NOTATION')
    throw new XPathError('XPST0080', `Cannot cast to xs:${type.local}`);
  if (!CAST_TARGETS.has(type.local)) throw new Unsupported(`cast to xs:${type.local}`);
  return type.local;
}

/** `cast as`: atomizes, checks the cardinality (`optional` for `?`), casts. */
export function castAs(s: Sequence, type: QName, optional: boolean): Sequence {
  const to = targetOf(type);
  const a = atomize(s);
  if (a.length === 0) {
    if (optional) return EMPTY;
    throw new XPathError('XPTY0004', `An empty sequence cannot be cast to xs:${to}`);
  }
  if (a.length > 1) throw new XPathError('XPTY0004', `A sequence of more than one item cannot be cast to xs:${to}`);
  return [castAtomic(a[0]!, to)];
}

/** `castable as`. */
export function castableAs(s: Sequence, type: QName, optional: boolean): boolean {
  const to = targetOf(type);
  const a = atomize(s);
  if (a.length === 0) return optional;
  if (a.length > 1) return false;
  try {
    castAtomic(a[0]!, to);
    return true;
  } catch (e) {
    if (e instanceof XPathError) return false;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Sequence types

function nodeMatches(n: XNode, test: NodeTest): boolean {
  if (test.k === 'name') {
    if (n.kind !== ELEMENT) return false;
    return (test.ns === '*' || test.ns === n.ns) && (test.local === '*' || test.local === n.local);
  }
  switch (test.kind) {
    case 'node':
      return true;
    case 'text':
      return n.kind === TEXT;
    case 'comment':
      return n.kind === COMMENT;
    case 'document':
      return n.kind === DOCUMENT;
    case 'pi':
      return n.kind === PI && (test.name === undefined || test.name === '*' || test.name.local === n.local);
    case 'element':
    case 'attribute':
      if (n.kind !== (test.kind === 'element' ? ELEMENT : ATTRIBUTE)) return false;
      return test.name === undefined || test.name === '*' || (test.name.ns === n.ns && test.name.local === n.local);
  }
}

type ItemType = Extract<SequenceType, { k: 'item' }>['item'];

export function itemMatches(item: Item, t: ItemType): boolean {
  if (t.k === 'anyItem') return true;
  if (t.k === 'atomic') {
    if (isNode(item)) return false;
    if (t.type.ns !== XS_NS) throw new XPathError('XPST0051', `Unknown atomic type Q{${t.type.ns}}${t.type.local}`);
    return derivesFrom(typeOf(item), t.type.local);
  }
  return isNode(item) && nodeMatches(item, t);
}

function cardinalityOk(n: number, occ: '' | '?' | '*' | '+'): boolean {
  switch (occ) {
    case '':
      return n === 1;
    case '?':
      return n <= 1;
    case '+':
      return n >= 1;
    default:
      return true;
  }
}

export function instanceOf(s: Sequence, t: SequenceType): boolean {
  if (t.k === 'empty') return s.length === 0;
  if (!cardinalityOk(s.length, t.occ)) return false;
  for (const it of s) if (!itemMatches(it, t.item)) return false;
  return true;
}

function describe(t: SequenceType): string {
  if (t.k === 'empty') return 'empty-sequence()';
  const i = t.item;
  const name =
    i.k === 'atomic'
      ? `xs:${i.type.local}`
      : i.k === 'anyItem'
        ? 'item()'
        : i.k === 'name'
          ? 'element()'
          : `${i.kind}()`;
  return name + t.occ;
}

/**
 * The function conversion rules (`as` on xsl:variable, xsl:param, xsl:function): atomization for an atomic type,
 * untypedAtomic cast to it, numeric promotion, anyURI to string, then the type and cardinality check.
 */
export function convertTo(s: Sequence, t: SequenceType, what: string, code = 'XTTE0570'): Sequence {
  if (t.k === 'item' && t.item.k === 'atomic') {
    const target = t.item.type.local;
    if (t.item.type.ns !== XS_NS) throw new XPathError('XPST0051', `Unknown atomic type Q{${t.item.type.ns}}${target}`);
    const atoms = atomize(s);
    let out: Atomic[] | undefined;
    for (let k = 0; k < atoms.length; k++) {
      const a = atoms[k]!;
      let c: Atomic = a;
      const ta = typeOf(a);
      if (!derivesFrom(ta, target)) {
        if (a instanceof Untyped && target !== 'untypedAtomic') c = castAtomic(a, target);
        else if (target === 'double' && numKind(a) >= 0) c = toNum(a);
        else if (target === 'float' && (ta === 'integer' || ta === 'decimal')) c = castAtomic(a, 'float');
        else if (target === 'string' && a instanceof AnyUriValue) c = a.s;
        else
          throw new XPathError(
            code,
            `Required item type of ${what} is ${describe(t)}; supplied value has item type ${xsName(ta)}`,
          );
      }
      if (c !== a) {
        out ??= atoms.slice(0, k);
      }
      if (out) out.push(c);
    }
    const result = out ?? atoms;
    if (!cardinalityOk(result.length, t.occ))
      throw new XPathError(
        code,
        `Required cardinality of ${what} is ${describe(t)}; supplied value has ${result.length} items`,
      );
    return result;
  }
  if (t.k === 'empty') {
    if (s.length > 0) throw new XPathError(code, `Required type of ${what} is empty-sequence()`);
    return s;
  }
  if (!cardinalityOk(s.length, t.occ))
    throw new XPathError(
      code,
      `Required cardinality of ${what} is ${describe(t)}; supplied value has ${s.length} items`,
    );
  for (const it of s)
    if (!itemMatches(it, t.item)) throw new XPathError(code, `Required item type of ${what} is ${describe(t)}`);
  return s;
}
