import {
  ATTRIBUTE,
  DOCUMENT,
  Dec,
  ELEMENT,
  FN_NS,
  Flt,
  PI,
  Unsupported,
  Untyped,
  XPathError,
  XS_NS,
  isNode,
  type Atomic,
  type DynContext,
  type FunctionImpl,
  type Item,
  type QName,
  type Sequence,
  type XNode,
} from './model';
import {
  AnyUriValue,
  CAST_TARGETS,
  DateTimeValue,
  DurationValue,
  adjustToTimezone,
  arithAtomic,
  atomize,
  atomizeItem,
  castAs,
  castAtomic,
  compareAtomic,
  compareStrings,
  currentDateTime,
  decOf,
  decToString,
  ebv,
  intOf,
  integerOf,
  numberOf,
  otherString,
  parseDouble,
  stringOf,
  typeOf,
} from './runtime';
import { stringValueOf } from './tree';

/**
 * The built-in functions of XPath 2.0 the rule packs call (and the rest of the common core), the xs: constructor
 * functions, and XSLT's current(), with SaxonJS's observable behaviour. Regular expressions are translated to
 * JavaScript the way SaxonJS translates them; constructs that cannot be translated exactly are Unsupported.
 */

const EMPTY: Sequence = [];
const TRUE: Sequence = [true];
const FALSE: Sequence = [false];
const EMPTY_STRING: Sequence = [''];

function bool(b: boolean): Sequence {
  return b ? TRUE : FALSE;
}

// ---------------------------------------------------------------------------------------------------------------------
// Argument conversion

function xsName(a: Atomic): string {
  return `xs:${typeOf(a)}`;
}

function cardinalityError(fn: string, n: number): never {
  throw new XPathError(
    'XPTY0004',
    `Required cardinality of an argument of ${fn}() is zero or one; supplied ${n} items`,
  );
}

/** An optional xs:string argument: '' for the empty sequence. */
function strArg(s: Sequence, fn: string): string {
  if (s.length === 0) return '';
  if (s.length > 1) cardinalityError(fn, s.length);
  const it = s[0]!;
  if (typeof it === 'string') return it;
  if (isNode(it)) return atomizeNodeString(it);
  if (it instanceof Untyped || it instanceof AnyUriValue) return it.s;
  throw new XPathError(
    'XPTY0004',
    `Required type of an argument of ${fn}() is xs:string: actual type is ${xsName(it)}`,
  );
}

function atomizeNodeString(n: XNode): string {
  return n.kind === ELEMENT || n.kind === DOCUMENT ? stringValueOf(n) : n.value;
}

/** A required xs:double argument (integer/decimal/float promoted, untypedAtomic cast). */
function doubleArg(s: Sequence, fn: string): number {
  if (s.length !== 1) {
    if (s.length === 0) throw new XPathError('XPTY0004', `An empty sequence is not allowed as an argument of ${fn}()`);
    cardinalityError(fn, s.length);
  }
  const a = atomizeItem(s[0]!);
  if (typeof a === 'number') return a;
  if (a instanceof Dec || a instanceof Flt) return numberOf(a);
  if (a instanceof Untyped) {
    const d = parseDouble(a.s);
    if (d === undefined) throw new XPathError('FORG0001', `Supplied value "${a.s}" is not a valid xs:double`);
    return d;
  }
  throw new XPathError('XPTY0004', `Required type of an argument of ${fn}() is xs:double: actual type is ${xsName(a)}`);
}

/** A required xs:integer argument. */
function integerArg(s: Sequence, fn: string): number {
  if (s.length !== 1) {
    if (s.length === 0) throw new XPathError('XPTY0004', `An empty sequence is not allowed as an argument of ${fn}()`);
    cardinalityError(fn, s.length);
  }
  let a = atomizeItem(s[0]!);
  if (a instanceof Untyped) a = castAtomic(a, 'integer');
  if (a instanceof Dec && a.integer) return numberOf(a);
  throw new XPathError(
    'XPTY0004',
    `Required type of an argument of ${fn}() is xs:integer: actual type is ${xsName(a)}`,
  );
}

/** An optional numeric argument: untypedAtomic becomes xs:double; undefined for the empty sequence. */
function numericArg(s: Sequence, fn: string): Atomic | undefined {
  if (s.length === 0) return undefined;
  if (s.length > 1) cardinalityError(fn, s.length);
  const a = atomizeItem(s[0]!);
  if (typeof a === 'number' || a instanceof Dec || a instanceof Flt) return a;
  if (a instanceof Untyped) return castAtomic(a, 'double');
  throw new XPathError(
    'XPTY0004',
    `Required type of an argument of ${fn}() is xs:numeric: actual type is ${xsName(a)}`,
  );
}

function optionalNode(s: Sequence, fn: string): XNode | undefined {
  if (s.length === 0) return undefined;
  if (s.length > 1) cardinalityError(fn, s.length);
  const it = s[0]!;
  if (!isNode(it)) throw new XPathError('XPTY0004', `The argument of ${fn}() is not a node`);
  return it;
}

function contextItem(ctx: DynContext, fn: string): Item {
  if (ctx.item === undefined) throw new XPathError('XPDY0002', `The context item for ${fn}() is absent`);
  return ctx.item;
}

function contextNode(ctx: DynContext, fn: string): XNode {
  const it = contextItem(ctx, fn);
  if (!isNode(it)) throw new XPathError('XPTY0004', `The context item for ${fn}() is not a node`);
  return it;
}

// ---------------------------------------------------------------------------------------------------------------------
// Strings with codepoint semantics

const SURROGATE = /[\uD800-\uDFFF]/;

export function codepointLength(s: string): number {
  if (!SURROGATE.test(s)) return s.length;
  let n = 0;
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0xd800 && c <= 0xdbff && k + 1 < s.length) {
      const d = s.charCodeAt(k + 1);
      if (d >= 0xdc00 && d <= 0xdfff) k++;
    }
    n++;
  }
  return n;
}

/** fn:substring: characters at positions p with round(start) <= p < round(start) + round(length). */
export function substring(s: string, start: number, length?: number): string {
  const from = Math.round(start);
  const end = length === undefined ? Infinity : from + Math.round(length);
  if (!SURROGATE.test(s)) {
    const a = Math.max(from, 1);
    const b = Math.min(end, s.length + 1);
    if (!(a < b)) return '';
    return s.substring(a - 1, b - 1);
  }
  let out = '';
  let p = 0;
  for (const ch of s) {
    p++;
    if (p >= from && p < end) out += ch;
  }
  return out;
}

function translate(s: string, map: string, trans: string): string {
  const m = Array.from(map);
  const t = Array.from(trans);
  let out = '';
  for (const ch of s) {
    const k = m.indexOf(ch);
    if (k < 0) out += ch;
    else if (k < t.length) out += t[k];
  }
  return out;
}

function normalizeSpace(s: string): string {
  return s.replace(/[ \n\r\t]+/g, ' ').replace(/^ | $/g, '');
}

function codepointsToString(s: Sequence): string {
  let out = '';
  for (const it of s) {
    const a = atomizeItem(it);
    const v = a instanceof Untyped ? castAtomic(a, 'integer') : a;
    if (!(v instanceof Dec) || !v.integer)
      throw new XPathError('XPTY0004', `Required type of codepoints-to-string() is xs:integer*: found ${xsName(v)}`);
    const c = numberOf(v);
    if (
      (c < 32 && c !== 9 && c !== 10 && c !== 13) ||
      (c > 0xd7ff && c < 0xe000) ||
      (c > 0xfffd && c < 0x10000) ||
      c > 0x10ffff
    )
      throw new XPathError('FOCH0001', `Invalid XML character 0x${c.toString(16)}`);
    out += String.fromCodePoint(c);
  }
  return out;
}

function stringToCodepoints(s: string): Sequence {
  const out: Atomic[] = [];
  for (const ch of s) out.push(intOf(ch.codePointAt(0)!));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// Regular expressions (SaxonJS's translation of XPath regexes to JavaScript)

interface CompiledRegex {
  readonly re: RegExp;
  readonly groups: number;
}

const REGEX_CACHE = new Map<string, CompiledRegex>();

function regexError(msg: string): never {
  throw new XPathError('FORX0002', `Invalid XPath regular expression: ${msg}`);
}

const NAME_START: readonly (readonly [number, number])[] = [
  [58, 58],
  [65, 90],
  [95, 95],
  [97, 122],
  [192, 214],
  [216, 246],
  [248, 767],
  [880, 893],
  [895, 8191],
  [8204, 8205],
  [8304, 8591],
  [11264, 12271],
  [12289, 55295],
  [63744, 64975],
  [65008, 65533],
  [65536, 983039],
];
const NAME_CHAR: readonly (readonly [number, number])[] = [
  [45, 46],
  [48, 58],
  [65, 90],
  [95, 95],
  [97, 122],
  [183, 183],
  [192, 214],
  [216, 246],
  [248, 893],
  [895, 8191],
  [8204, 8205],
  [8255, 8256],
  [8304, 8591],
  [11264, 12271],
  [12289, 55295],
  [63744, 64975],
  [65008, 65533],
  [65536, 983039],
];

function hex(c: number): string {
  return `\\u{${c.toString(16)}}`;
}

function rangesToClass(ranges: readonly (readonly [number, number])[], inClass: boolean, negate: boolean): string {
  let list = ranges;
  if (negate) {
    const out: [number, number][] = [];
    if (ranges[0]![0] !== 0) out.push([0, ranges[0]![0] - 1]);
    for (let k = 1; k < ranges.length; k++) {
      const a = ranges[k - 1]![1] + 1;
      const b = ranges[k]![0] - 1;
      if (b >= a) out.push([a, b]);
    }
    out.push([ranges[ranges.length - 1]![1] + 1, 0x10ffff]);
    list = out;
  }
  let s = '';
  for (const [a, b] of list) s += b > a ? hex(a) + '-' + hex(b) : hex(a);
  return inClass ? s : `[${s}]`;
}

const CATEGORIES = new Set([
  'L',
  'Lu',
  'Ll',
  'Lt',
  'Lm',
  'Lo',
  'M',
  'Mn',
  'Mc',
  'Me',
  'N',
  'Nd',
  'Nl',
  'No',
  'P',
  'Pc',
  'Pd',
  'Ps',
  'Pe',
  'Pi',
  'Pf',
  'Po',
  'Z',
  'Zs',
  'Zl',
  'Zp',
  'S',
  'Sm',
  'Sc',
  'Sk',
  'So',
  'C',
  'Cc',
  'Cf',
  'Co',
  'Cn',
]);

const ESCAPABLE = 'nrt\\|.-^?*+{}()[]pPsSiIcCdDwW$';

// SaxonJS's character categories come from an older Unicode version than this JavaScript engine's: \d and \w are
// translated as JavaScript's categories corrected by the differences, found by comparing both on every BMP code
// point (test/unit/validation/compiled/functions.test.ts checks them). Characters outside the BMP are not compared.
const D_NEWER = '\\u{de6}-\\u{def}\\u{a9f0}-\\u{a9f9}';
const W_NEWER =
  '\\u{37f}\\u{528}-\\u{52f}\\u{560}\\u{588}\\u{58d}-\\u{58e}\\u{5ef}\\u{7fd}-\\u{7ff}\\u{860}-\\u{86a}' +
  '\\u{870}-\\u{88f}\\u{897}-\\u{89f}\\u{8a1}\\u{8ad}-\\u{8e1}\\u{8e3}\\u{8ff}\\u{978}\\u{980}\\u{9fc}\\u{9fe}' +
  '\\u{af9}-\\u{aff}\\u{b55}\\u{c00}\\u{c04}\\u{c34}\\u{c3c}\\u{c5a}\\u{c5c}-\\u{c5d}\\u{c80}-\\u{c81}' +
  '\\u{cdc}-\\u{cdd}\\u{cf3}\\u{d00}-\\u{d01}\\u{d04}\\u{d3b}-\\u{d3c}\\u{d4f}\\u{d54}-\\u{d56}\\u{d58}-\\u{d5f}' +
  '\\u{d76}-\\u{d78}\\u{d81}\\u{de6}-\\u{def}\\u{e86}\\u{e89}\\u{e8c}\\u{e8e}-\\u{e93}\\u{e98}\\u{ea0}' +
  '\\u{ea8}-\\u{ea9}\\u{eac}\\u{eba}\\u{ece}\\u{13f5}\\u{13f8}-\\u{13fd}\\u{166d}\\u{16f1}-\\u{16f8}\\u{170d}' +
  '\\u{1715}\\u{171f}\\u{180f}\\u{1878}\\u{191d}-\\u{191e}\\u{1ab0}-\\u{1add}\\u{1ae0}-\\u{1aeb}\\u{1b4c}' +
  '\\u{1c80}-\\u{1c8a}\\u{1c90}-\\u{1cba}\\u{1cbd}-\\u{1cbf}\\u{1cf7}-\\u{1cfa}\\u{1de7}-\\u{1dfb}' +
  '\\u{20bb}-\\u{20c1}\\u{218a}-\\u{218b}\\u{23f4}-\\u{23ff}\\u{2427}-\\u{2429}\\u{2700}\\u{2b4d}-\\u{2b4f}' +
  '\\u{2b5a}-\\u{2b73}\\u{2b76}-\\u{2bff}\\u{2c2f}\\u{2c5f}\\u{2e50}-\\u{2e51}\\u{2ffc}-\\u{2fff}' +
  '\\u{312e}-\\u{312f}\\u{31bb}-\\u{31bf}\\u{31e4}-\\u{31e5}\\u{31ef}\\u{32ff}\\u{4db6}-\\u{4dbf}' +
  '\\u{9fcd}-\\u{9fff}\\u{a698}-\\u{a69e}\\u{a78f}\\u{a794}-\\u{a79f}\\u{a7ab}-\\u{a7dc}\\u{a7f1}-\\u{a7f7}' +
  '\\u{a82c}\\u{a8c5}\\u{a8fd}-\\u{a8ff}\\u{a9e0}-\\u{a9fe}\\u{aa7c}-\\u{aa7f}\\u{ab30}-\\u{ab6b}' +
  '\\u{ab70}-\\u{abbf}\\u{fbc2}-\\u{fbd2}\\u{fd40}-\\u{fd4f}\\u{fd90}-\\u{fd91}\\u{fdc8}-\\u{fdcf}' +
  '\\u{fdfe}-\\u{fdff}\\u{fe27}-\\u{fe2f}';
const W_OLDER = '\\u{2308}-\\u{230b}';
const XSD_DIGIT = `(?:(?![${D_NEWER}])\\p{Nd})`;
const XSD_WORD = `(?:[${W_OLDER}]|(?![${W_NEWER}])[^\\p{P}\\p{Z}\\p{C}])`;
const XSD_NON_WORD = `(?:(?![${W_OLDER}])[\\p{P}\\p{Z}\\p{C}${W_NEWER}])`;

/** Translates an XPath regex with its flags to a JavaScript RegExp ('g' added when `global`). */
export function compileRegex(pattern: string, flags: string, global: boolean): CompiledRegex {
  const key = (global ? 'g' : '-') + flags + '\u0000' + pattern;
  let hit = REGEX_CACHE.get(key);
  if (!hit) {
    hit = translateRegex(pattern, flags, global);
    if (REGEX_CACHE.size > 2000) REGEX_CACHE.clear();
    REGEX_CACHE.set(key, hit);
  }
  return hit;
}

function translateRegex(pattern: string, flags: string, global: boolean): CompiledRegex {
  if (!/^[smijxq]*$/.test(flags)) throw new XPathError('FORX0001', `Illegal flags for regular expression: ${flags}`);
  if (flags.includes('j')) {
    // SaxonJS's extension flag: the pattern is a JavaScript regular expression, used as it is.
    try {
      return { re: new RegExp(pattern, flags.replace('j', '') + (global ? 'g' : '')), groups: 0 };
    } catch (e) {
      throw new XPathError('FORX0002', `Invalid regular expression /${pattern}/: ${(e as Error).message}`);
    }
  }
  const has = (f: string): boolean => flags.includes(f);
  const jsFlags = (has('i') ? 'i' : '') + (has('m') ? 'm' : '') + (global ? 'g' : '') + 'u';
  if (has('q')) return { re: new RegExp(pattern.replace(/[[\]/{}()*+?.\\^$|]/g, '\\$&'), jsFlags), groups: 0 };
  let g = pattern;
  let out = '';
  let groups = 0;
  let next = 1;
  let depth = 0;
  let subtracted = false;
  let quantifiable = false;
  const open: number[] = [];
  const closed: boolean[] = [];
  const x = has('x');
  for (let i = 0; i < g.length; i++) {
    const ch = g.charAt(i);
    switch (ch) {
      case '[': {
        if (depth > 0) regexError('Nested square brackets');
        let base: string | false = false;
        let found = false;
        let escaped = false;
        for (let j = i + 2; j < g.length - 3; j++) {
          if (!escaped && g.substring(j, j + 2) === '-[') {
            base = g.substring(i + 1, j);
            let sub: string | undefined;
            let end = j + 2;
            for (; end < g.length; end++)
              if (g.charAt(end) === ']' && g.charAt(end - 1) !== '\\') {
                sub = g.substring(j + 2, end + 1);
                break;
              }
            if (base === '^') regexError('Invalid subtraction');
            if (sub === undefined) regexError("Unmatched '['");
            g = g.substring(0, i) + '(?![' + sub + ')[' + base + ']' + g.substring(end + 2);
            i--;
            found = true;
            break;
          } else if (!escaped && g.charAt(j) === ']') break;
          escaped = g.charAt(j) === '\\' && !escaped;
        }
        if (found) {
          subtracted = true;
          break;
        }
        if (g.charAt(i + 1) === ']') regexError('Character group is empty');
        if (g.substring(i, i + 3) === '[^]') regexError('Invalid character group [^]');
        depth++;
        out += ch;
        break;
      }
      case ']':
        if (depth === 0) regexError("Unmatched ']'");
        depth--;
        out += ch;
        quantifiable = true;
        break;
      case '(':
        if (depth === 0) {
          let capturing = true;
          if (i + 2 < g.length && g.charAt(i + 1) === '?') {
            if (g.charAt(i + 2) === ':' || (subtracted && g.charAt(i + 2) === '!')) capturing = false;
            else regexError("'(?' must be followed by ':'");
          }
          open.push(capturing ? next++ : -1);
          quantifiable = false;
          if (capturing) groups++;
        }
        out += ch;
        break;
      case ')':
        if (depth === 0) {
          if (open.length === 0) regexError("Unmatched ')'");
          const n = open.pop()!;
          if (n > 0) closed[n] = true;
        }
        out += ch;
        quantifiable = true;
        break;
      case '.':
        out += depth === 0 && has('s') ? '[^]' : '.';
        quantifiable = true;
        break;
      case '{':
        if (depth === 0) {
          if (!quantifiable) regexError("'{' not allowed here");
          const close = g.indexOf('}', i + 1);
          if (close < 0 || !/^[0-9]+(,[0-9]*)?$/.test(g.substring(i + 1, close)))
            regexError(`Invalid quantifier {${g.substring(i + 1, close + 1)}`);
          quantifiable = false;
        }
        out += ch;
        break;
      case ' ':
      case '\n':
      case '\r':
      case '\t':
        if (!x || depth > 0) out += ch;
        quantifiable = true;
        break;
      case '\\': {
        if (i + 1 >= g.length) throw new XPathError('FORX0002', 'No character for escape code in XPath regex');
        if (x && /\s/.test(g.charAt(i + 1))) i++;
        const c = g.charAt(i + 1);
        if (!ESCAPABLE.includes(c) && (depth !== 0 || !/[0-9]/.test(c)))
          regexError(`\\${c} is not allowed in XPath regular expressions`);
        const inClass = depth > 0;
        switch (c) {
          case 'p':
          case 'P': {
            const close = g.indexOf('}', i);
            if (g.charAt(i + 2) !== '{' || close < 0) regexError(`Invalid category escape`);
            let name = g.substring(i + 3, close);
            if (x) name = name.replace(/[ \n\r\t]+/g, '');
            if (!name.startsWith('Is') && !CATEGORIES.has(name)) regexError(`Unknown category ${name}`);
            // Categories and blocks differ between SaxonJS's Unicode tables and JavaScript's.
            throw new Unsupported(`regex category escape \\${c}{${name}}`);
          }
          case 'd':
            if (inClass) throw new Unsupported('regex \\d inside a character class');
            out += XSD_DIGIT;
            i++;
            break;
          case 'i':
          case 'I':
            out += rangesToClass(NAME_START, inClass, c === 'I');
            i++;
            break;
          case 'c':
          case 'C':
            out += rangesToClass(NAME_CHAR, inClass, c === 'C');
            i++;
            break;
          case 'w':
          case 'W':
            if (inClass) throw new Unsupported(`regex \\${c} inside a character class`);
            out += c === 'w' ? XSD_WORD : XSD_NON_WORD;
            i++;
            break;
          case '-':
            out += inClass ? '\\-' : '-';
            i++;
            break;
          default:
            if (/[0-9]/.test(c)) {
              const n = parseInt(c, 10);
              if (!closed[n]) regexError(`No capturing expression #${c}`);
              out += '\\' + c;
              if (next <= 9 && /[0-9]/.test(g.charAt(i + 2))) out += '(?:)';
            } else out += '\\' + c;
            i++;
        }
        quantifiable = true;
        break;
      }
      default:
        quantifiable = true;
        out += ch;
    }
  }
  if (depth > 0) regexError("Unmatched '['");
  if (open.length !== 0) regexError("Unmatched '('");
  try {
    return { re: new RegExp(out, jsFlags), groups };
  } catch (e) {
    throw new XPathError('FORX0002', `Invalid regular expression /${pattern}/: ${(e as Error).message}`);
  }
}

/** The replacement string of fn:replace in JavaScript's syntax, as SaxonJS converts it. */
function replacement(rep: string, flags: string, groups: number): string {
  if (flags.includes('j')) return rep;
  if (flags.includes('q')) return rep.replace(/\$/g, '$$$$');
  if (/(^|[^\\])\$([^0-9]|$)/.test(rep) || /(^|[^\\])\\([^\\$]|$)/.test(rep))
    throw new XPathError('FORX0004', `Invalid replacement string: ${rep}`);
  let escaped = false;
  let dollar = false;
  let out = '';
  for (const p of rep) {
    switch (p) {
      case '\\':
        if (escaped) out += p;
        escaped = !escaped;
        break;
      case '$':
        if (escaped) {
          out += '$$';
          escaped = false;
        } else dollar = true;
        break;
      case '0':
        if (dollar) {
          out += '$&';
          dollar = false;
        } else out += p;
        break;
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        if (dollar) {
          if (parseInt(p, 10) <= groups) {
            out += '$' + p;
            dollar = false;
          }
        } else out += p;
        break;
      default:
        out += p;
    }
  }
  return out;
}

function flagsArg(args: readonly Sequence[], k: number, fn: string): string {
  return args.length > k ? strArg(args[k]!, fn) : '';
}

function matches(input: string, pattern: string, flags: string): boolean {
  return compileRegex(pattern, flags, false).re.test(input);
}

function replace(input: string, pattern: string, rep: string, flags: string): string {
  const { re, groups } = compileRegex(pattern, flags, true);
  re.lastIndex = 0;
  if (re.test('')) throw new XPathError('FORX0003', 'Regular expression matches zero-length string');
  re.lastIndex = 0;
  return input.replace(re, replacement(rep, flags, groups));
}

function tokenize(input: string, pattern: string, flags: string): Sequence {
  if (input === '') return EMPTY;
  const { re } = compileRegex(pattern, flags, true);
  re.lastIndex = 0;
  if (re.test('')) throw new XPathError('FORX0003', 'Regular expression matches zero-length string');
  re.lastIndex = 0;
  const out: string[] = [];
  let from = 0;
  for (let m = re.exec(input); m !== null; m = re.exec(input)) {
    out.push(input.substring(from, m.index));
    from = re.lastIndex;
  }
  out.push(input.substring(from));
  re.lastIndex = 0;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// Numeric functions

function numericUnary(fn: string, f: (a: Atomic) => Atomic): FunctionImpl {
  return (_ctx, args) => {
    const a = numericArg(args[0]!, fn);
    return a === undefined ? EMPTY : [f(a)];
  };
}

function absOf(a: Atomic): Atomic {
  if (typeof a === 'number') return Math.abs(a);
  if (a instanceof Flt) return new Flt(Math.abs(a.n));
  const d = a as Dec;
  return d.units < 0n ? new Dec(-d.units, d.scale, d.integer) : d;
}

function decFloor(d: Dec): bigint {
  const p = 10n ** BigInt(d.scale);
  const q = d.units / p;
  return d.units < 0n && q * p !== d.units ? q - 1n : q;
}

function floorOf(a: Atomic): Atomic {
  if (typeof a === 'number') return Math.floor(a);
  if (a instanceof Flt) return new Flt(Math.floor(a.n));
  const d = a as Dec;
  if (d.scale === 0) return d;
  return decOf(decFloor(d), 0);
}

function ceilingOf(a: Atomic): Atomic {
  if (typeof a === 'number') return Math.ceil(a);
  if (a instanceof Flt) return new Flt(Math.ceil(a.n));
  const d = a as Dec;
  if (d.scale === 0) return d;
  return decOf(decFloor(d) + 1n, 0);
}

/** fn:round: half towards positive infinity (JavaScript's Math.round for double and float). */
function roundOf(a: Atomic): Atomic {
  if (typeof a === 'number') return Math.round(a);
  if (a instanceof Flt) return new Flt(Math.round(a.n));
  const d = a as Dec;
  if (d.scale === 0) return d;
  const p = 10n ** BigInt(d.scale);
  const fl = decFloor(d);
  const frac2 = (d.units - fl * p) * 2n;
  const r = frac2 >= p ? fl + 1n : fl;
  return d.integer ? integerOf(r) : decOf(r, 0);
}

/** fn:round-half-to-even (via the decimal of the number's shortest string form for double and float). */
function roundHalfEven(a: Atomic, precision: number): Atomic {
  if (typeof a === 'number' || a instanceof Flt) {
    const v = typeof a === 'number' ? a : a.n;
    if (!Number.isFinite(v)) return a;
    const d = castAtomic(v, 'decimal') as Dec;
    let r = numberOf(decRoundHalfEven(d, precision));
    if (r === 0 && v < 0) r = -0;
    return typeof a === 'number' ? r : new Flt(Math.fround(r));
  }
  const d = a as Dec;
  const r = decRoundHalfEven(d, precision);
  return d.integer ? integerOf(r.units * 10n ** BigInt(-Math.min(0, -r.scale))) : r;
}

function decRoundHalfEven(d: Dec, precision: number): Dec {
  const drop = d.scale - precision;
  if (drop <= 0) return d;
  const p = 10n ** BigInt(drop);
  let q = d.units / p;
  const r = d.units - q * p;
  const r2 = (r < 0n ? -r : r) * 2n;
  if (r2 > p || (r2 === p && q % 2n !== 0n)) q += d.units < 0n ? -1n : 1n;
  return decOf(q, precision);
}

// ---------------------------------------------------------------------------------------------------------------------
// Aggregates

function sumAtoms(atoms: readonly Atomic[], fn: string): Atomic {
  let acc = atoms[0]!;
  if (acc instanceof Untyped) acc = castAtomic(acc, 'double');
  try {
    arithAtomic('+', acc, acc);
    for (let k = 1; k < atoms.length; k++) {
      let a = atoms[k]!;
      if (a instanceof Untyped) a = castAtomic(a, 'double');
      acc = arithAtomic('+', a, acc);
    }
  } catch (e) {
    if (e instanceof XPathError && e.code === 'XPTY0004') throw new XPathError('FORG0006', `${fn}(): ${e.message}`);
    throw e;
  }
  return acc;
}

function isNumeric(a: Atomic): boolean {
  return typeof a === 'number' || a instanceof Dec || a instanceof Flt;
}

function isNaNAtom(a: Atomic): boolean {
  return (typeof a === 'number' && Number.isNaN(a)) || (a instanceof Flt && Number.isNaN(a.n));
}

function minMax(max: boolean): FunctionImpl {
  const fn = max ? 'max' : 'min';
  return (_ctx, args) => {
    const atoms = atomize(args[0]!);
    if (atoms.length === 0) return EMPTY;
    const conv = (a: Atomic): Atomic => (a instanceof Untyped ? castAtomic(a, 'double') : a);
    let acc = conv(atoms[0]!);
    if (acc instanceof DurationValue && acc.type === 'duration')
      throw new XPathError('FORG0006', `${fn}() not defined over mixed durations`);
    for (let k = 1; k < atoms.length; k++) {
      let x = conv(atoms[k]!);
      let v = acc;
      const xs = typeof x === 'string' || x instanceof AnyUriValue;
      const vs = typeof v === 'string' || v instanceof AnyUriValue;
      if ((xs && isNumeric(v)) || (vs && isNumeric(x)))
        throw new XPathError('FORG0006', 'Cannot compare string with numeric');
      if (isNaNAtom(v)) {
        acc = typeof x === 'number' ? castAtomic(v, 'double') : v;
        continue;
      }
      if (isNaNAtom(x)) {
        acc = typeof v === 'number' ? castAtomic(x, 'double') : x;
        continue;
      }
      if (typeof v === 'number' && !xs) x = castAtomic(x, 'double');
      else if (typeof x === 'number' && !vs) v = castAtomic(v, 'double');
      else if (v instanceof Flt && !xs) x = castAtomic(x, 'float');
      else if (x instanceof Flt && !vs) v = castAtomic(v, 'float');
      if (v instanceof AnyUriValue && typeof x === 'string') v = v.s;
      else if (x instanceof AnyUriValue && typeof v === 'string') x = x.s;
      let c: number;
      try {
        c = compareAtomic(x, v, true);
      } catch (e) {
        if (e instanceof XPathError && e.code === 'XPTY0004') throw new XPathError('FORG0006', e.message);
        throw e;
      }
      acc = (max ? c > 0 : c < 0) ? x : v;
    }
    return [acc];
  };
}

/** A key under which fn:distinct-values and fn:index-of treat values as equal. */
function equalityKey(a: Atomic): string {
  switch (typeof a) {
    case 'string':
      return 's' + a;
    case 'boolean':
      return a ? 'bt' : 'bf';
    case 'number':
      return numKey(a);
  }
  if (a instanceof Untyped || a instanceof AnyUriValue) return 's' + a.s;
  if (a instanceof Dec) return 'n' + decToString(a);
  if (a instanceof Flt) return numKey(a.n);
  if (a instanceof DateTimeValue)
    return 't' + a.type + ':' + String(a.wall - (a.tz ?? -new Date(a.wall).getTimezoneOffset()) * 60000);
  if (a instanceof DurationValue) return 'd' + a.months + ':' + a.ms;
  return 'o' + otherString(a);
}

function numKey(n: number): string {
  if (Number.isNaN(n)) return 'nNaN';
  if (!Number.isFinite(n)) return n > 0 ? 'nINF' : 'n-INF';
  if (n === 0) return 'n0';
  return 'n' + decToString(castAtomic(n, 'decimal') as Dec);
}

function atomsEqual(a: Atomic, b: Atomic): boolean {
  if (a instanceof Untyped) a = a.s;
  if (b instanceof Untyped) b = b.s;
  if (isNaNAtom(a) && isNaNAtom(b)) return true;
  try {
    return compareAtomic(a, b, false) === 0;
  } catch (e) {
    if (e instanceof XPathError) return false;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Nodes

function nodeName(n: XNode): string {
  return n.kind === ELEMENT || n.kind === ATTRIBUTE || n.kind === PI ? n.name : '';
}

function nodeArgOrContext(ctx: DynContext, args: readonly Sequence[], fn: string): XNode | undefined {
  return args.length === 0 ? contextNode(ctx, fn) : optionalNode(args[0]!, fn);
}

// ---------------------------------------------------------------------------------------------------------------------
// The table

const TABLE = new Map<string, FunctionImpl>();

function def(name: string, arities: readonly number[], impl: FunctionImpl, ns = FN_NS): void {
  for (const n of arities) TABLE.set(`{${ns}}${name}#${n}`, impl);
}

let now: { date: Date; at: number } | undefined;
/** One clock reading per evaluation burst: current-dateTime() is stable within a validation run of < 1 s. */
function clock(): Date {
  const t = Date.now();
  if (!now || t - now.at > 1000) now = { date: new Date(t), at: t };
  return now.date;
}

def('true', [0], () => TRUE);
def('false', [0], () => FALSE);
def('not', [1], (_c, a) => bool(!ebv(a[0]!)));
def('boolean', [1], (_c, a) => bool(ebv(a[0]!)));
def('position', [0], (c) => {
  contextItem(c, 'position');
  return [intOf(c.pos)];
});
def('last', [0], (c) => {
  contextItem(c, 'last');
  return [intOf(c.size)];
});
def('current', [0], (c) => {
  if (c.current === undefined) throw new XPathError('XTDE1360', 'current() is not available here');
  return [c.current];
});
def('count', [1], (_c, a) => [intOf(a[0]!.length)]);
def('exists', [1], (_c, a) => bool(a[0]!.length > 0));
def('empty', [1], (_c, a) => bool(a[0]!.length === 0));
def('data', [1], (_c, a) => atomize(a[0]!));
def('data', [0], (c) => [atomizeItem(contextItem(c, 'data'))]);
def('string', [0], (c) => [stringOf(contextItem(c, 'string'))]);
def('string', [1], (_c, a) => {
  const s = a[0]!;
  if (s.length === 0) return EMPTY_STRING;
  if (s.length > 1) cardinalityError('string', s.length);
  return [stringOf(s[0]!)];
});
def('number', [0], (c) => [numberOf(contextItem(c, 'number'))]);
def('number', [1], (_c, a) => {
  const s = a[0]!;
  if (s.length > 1) cardinalityError('number', s.length);
  return [numberOf(s[0])];
});
def('string-length', [0], (c) => [intOf(codepointLength(stringOf(contextItem(c, 'string-length'))))]);
def('string-length', [1], (_c, a) => [intOf(codepointLength(strArg(a[0]!, 'string-length')))]);
def('normalize-space', [0], (c) => [normalizeSpace(stringOf(contextItem(c, 'normalize-space')))]);
def('normalize-space', [1], (_c, a) => [normalizeSpace(strArg(a[0]!, 'normalize-space'))]);
def('upper-case', [1], (_c, a) => [strArg(a[0]!, 'upper-case').toUpperCase()]);
def('lower-case', [1], (_c, a) => [strArg(a[0]!, 'lower-case').toLowerCase()]);
def('contains', [2], (_c, a) => bool(strArg(a[0]!, 'contains').includes(strArg(a[1]!, 'contains'))));
def('starts-with', [2], (_c, a) => bool(strArg(a[0]!, 'starts-with').startsWith(strArg(a[1]!, 'starts-with'))));
def('ends-with', [2], (_c, a) => bool(strArg(a[0]!, 'ends-with').endsWith(strArg(a[1]!, 'ends-with'))));
def('substring-before', [2], (_c, a) => {
  const s = strArg(a[0]!, 'substring-before');
  const k = s.indexOf(strArg(a[1]!, 'substring-before'));
  return [k < 0 ? '' : s.substring(0, k)];
});
def('substring-after', [2], (_c, a) => {
  const s = strArg(a[0]!, 'substring-after');
  const t = strArg(a[1]!, 'substring-after');
  const k = s.indexOf(t);
  return [k < 0 ? '' : s.substring(k + t.length)];
});
def('substring', [2, 3], (_c, a) => [
  substring(
    strArg(a[0]!, 'substring'),
    doubleArg(a[1]!, 'substring'),
    a.length > 2 ? doubleArg(a[2]!, 'substring') : undefined,
  ),
]);
def('translate', [3], (_c, a) => [
  translate(strArg(a[0]!, 'translate'), strArg(a[1]!, 'translate'), strArg(a[2]!, 'translate')),
]);
def('string-join', [2], (_c, a) => {
  const sep = strArg(a[1]!, 'string-join');
  let out = '';
  const s = a[0]!;
  for (let k = 0; k < s.length; k++) {
    if (k > 0) out += sep;
    out += strArg([s[k]!], 'string-join');
  }
  return [out];
});
const concat: FunctionImpl = (_c, args) => {
  let out = '';
  for (const s of args) {
    if (s.length === 0) continue;
    if (s.length > 1) cardinalityError('concat', s.length);
    out += stringOf(s[0]!);
  }
  return [out];
};
def('string-to-codepoints', [1], (_c, a) => stringToCodepoints(strArg(a[0]!, 'string-to-codepoints')));
def('codepoints-to-string', [1], (_c, a) => [codepointsToString(a[0]!)]);
def('compare', [2], (_c, a) => {
  if (a[0]!.length === 0 || a[1]!.length === 0) return EMPTY;
  return [intOf(compareStrings(strArg(a[0]!, 'compare'), strArg(a[1]!, 'compare')))];
});
def('codepoint-equal', [2], (_c, a) => {
  if (a[0]!.length === 0 || a[1]!.length === 0) return EMPTY;
  return bool(strArg(a[0]!, 'codepoint-equal') === strArg(a[1]!, 'codepoint-equal'));
});
def('matches', [2, 3], (_c, a) =>
  bool(matches(strArg(a[0]!, 'matches'), strArg(a[1]!, 'matches'), flagsArg(a, 2, 'matches'))),
);
def('replace', [3, 4], (_c, a) => [
  replace(strArg(a[0]!, 'replace'), strArg(a[1]!, 'replace'), strArg(a[2]!, 'replace'), flagsArg(a, 3, 'replace')),
]);
def('tokenize', [2, 3], (_c, a) =>
  tokenize(strArg(a[0]!, 'tokenize'), strArg(a[1]!, 'tokenize'), flagsArg(a, 2, 'tokenize')),
);

def('abs', [1], numericUnary('abs', absOf));
def('floor', [1], numericUnary('floor', floorOf));
def('ceiling', [1], numericUnary('ceiling', ceilingOf));
def('round', [1], numericUnary('round', roundOf));
def('round-half-to-even', [1, 2], (_c, a) => {
  const v = numericArg(a[0]!, 'round-half-to-even');
  if (v === undefined) return EMPTY;
  return [roundHalfEven(v, a.length > 1 ? Math.min(integerArg(a[1]!, 'round-half-to-even'), 10000) : 0)];
});
def('sum', [1, 2], (_c, a) => {
  const atoms = atomize(a[0]!);
  if (atoms.length === 0) return a.length > 1 ? a[1]! : [intOf(0)];
  return [sumAtoms(atoms, 'sum')];
});
def('avg', [1], (_c, a) => {
  const atoms = atomize(a[0]!);
  if (atoms.length === 0) return EMPTY;
  try {
    return [arithAtomic('div', sumAtoms(atoms, 'avg'), intOf(atoms.length))];
  } catch (e) {
    if (e instanceof XPathError && e.code !== 'FORG0001')
      throw new XPathError('FORG0006', 'Input to avg() contains a mix of numeric and non-numeric values');
    throw e;
  }
});
def('max', [1], minMax(true));
def('min', [1], minMax(false));

def('distinct-values', [1], (_c, a) => {
  const atoms = atomize(a[0]!);
  if (atoms.length < 2) return atoms;
  const seen = new Set<string>();
  const out: Atomic[] = [];
  for (const x of atoms) {
    const k = equalityKey(x);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(x);
  }
  return out;
});
def('index-of', [2], (_c, a) => {
  const atoms = atomize(a[0]!);
  const search = atomize(a[1]!);
  if (search.length !== 1) throw new XPathError('XPTY0004', 'The second argument of index-of() must be one item');
  const out: Atomic[] = [];
  for (let k = 0; k < atoms.length; k++) if (atomsEqual(atoms[k]!, search[0]!)) out.push(intOf(k + 1));
  return out;
});
def('deep-equal', [2], (_c, a) => {
  const x = a[0]!;
  const y = a[1]!;
  if (x.length !== y.length) return FALSE;
  for (let k = 0; k < x.length; k++) {
    const p = x[k]!;
    const q = y[k]!;
    if (isNode(p) || isNode(q)) throw new Unsupported('deep-equal() on nodes');
    if (!atomsEqual(p, q)) return FALSE;
  }
  return TRUE;
});
def('reverse', [1], (_c, a) => (a[0]!.length < 2 ? a[0]! : [...a[0]!].reverse()));
def('subsequence', [2, 3], (_c, a) => {
  const s = a[0]!;
  const from = Math.round(doubleArg(a[1]!, 'subsequence'));
  const end = a.length > 2 ? from + Math.round(doubleArg(a[2]!, 'subsequence')) : Infinity;
  const out: Item[] = [];
  for (let p = 1; p <= s.length; p++) if (p >= from && p < end) out.push(s[p - 1]!);
  return out;
});
def('insert-before', [3], (_c, a) => {
  const s = a[0]!;
  const at = integerArg(a[1]!, 'insert-before');
  const k = Math.min(Math.max(at, 1), s.length + 1) - 1;
  return [...s.slice(0, k), ...a[2]!, ...s.slice(k)];
});
def('remove', [2], (_c, a) => {
  const s = a[0]!;
  const at = integerArg(a[1]!, 'remove');
  if (at < 1 || at > s.length) return s;
  return [...s.slice(0, at - 1), ...s.slice(at)];
});
def('zero-or-one', [1], (_c, a) => {
  if (a[0]!.length > 1) throw new XPathError('FORG0003', `Required length 0-1, actual length ${a[0]!.length}`);
  return a[0]!;
});
def('one-or-more', [1], (_c, a) => {
  if (a[0]!.length === 0) throw new XPathError('FORG0004', 'Required length >= 1, actual length zero');
  return a[0]!;
});
def('exactly-one', [1], (_c, a) => {
  if (a[0]!.length !== 1) throw new XPathError('FORG0005', `Required length 1, actual length ${a[0]!.length}`);
  return a[0]!;
});
def('unordered', [1], (_c, a) => a[0]!);

def('name', [0, 1], (c, a) => {
  const n = nodeArgOrContext(c, a, 'name');
  return [n ? nodeName(n) : ''];
});
def('local-name', [0, 1], (c, a) => {
  const n = nodeArgOrContext(c, a, 'local-name');
  return [n && (n.kind === ELEMENT || n.kind === ATTRIBUTE || n.kind === PI) ? n.local : ''];
});
def('namespace-uri', [0, 1], (c, a) => {
  const n = nodeArgOrContext(c, a, 'namespace-uri');
  return [new AnyUriValue(n && (n.kind === ELEMENT || n.kind === ATTRIBUTE) ? n.ns : '')];
});
def('root', [0, 1], (c, a) => {
  const n = nodeArgOrContext(c, a, 'root');
  return n ? [n.root] : EMPTY;
});
def('document-uri', [1], (_c, a) => {
  optionalNode(a[0]!, 'document-uri');
  // The validated document is parsed from memory: it has no URI, as in SaxonJS.
  return EMPTY;
});

def('current-dateTime', [0], () => [currentDateTime(clock())]);
def('current-date', [0], () => [castAtomic(currentDateTime(clock()), 'date')]);
def('current-time', [0], () => [castAtomic(currentDateTime(clock()), 'time')]);
for (const [fn, type] of [
  ['adjust-dateTime-to-timezone', 'dateTime'],
  ['adjust-date-to-timezone', 'date'],
  ['adjust-time-to-timezone', 'time'],
] as const) {
  def(fn, [1, 2], (_c, a) => {
    const s = atomize(a[0]!);
    if (s.length === 0) return EMPTY;
    const v = s[0]!;
    if (!(v instanceof DateTimeValue) || v.type !== type)
      throw new XPathError('XPTY0004', `Required type of the first argument of ${fn}() is xs:${type}`);
    if (a.length === 1) {
      const implicit = new DurationValue('dayTimeDuration', 0, -new Date(v.wall).getTimezoneOffset() * 60000);
      return [adjustToTimezone(v, implicit)];
    }
    const tz = atomize(a[1]!);
    if (tz.length > 0 && !(tz[0] instanceof DurationValue && tz[0].type === 'dayTimeDuration'))
      throw new XPathError('XPTY0004', `Required type of the second argument of ${fn}() is xs:dayTimeDuration?`);
    return [adjustToTimezone(v, tz[0] as DurationValue | undefined)];
  });
}
for (const [fn, type, part] of [
  ['year-from-date', 'date', 0],
  ['month-from-date', 'date', 1],
  ['day-from-date', 'date', 2],
  ['year-from-dateTime', 'dateTime', 0],
  ['month-from-dateTime', 'dateTime', 1],
  ['day-from-dateTime', 'dateTime', 2],
] as const) {
  def(fn, [1], (_c, a) => {
    const s = atomize(a[0]!);
    if (s.length === 0) return EMPTY;
    const v = s[0] instanceof Untyped ? castAtomic(s[0], type) : s[0]!;
    if (!(v instanceof DateTimeValue) || v.type !== type)
      throw new XPathError('XPTY0004', `Required type of the argument of ${fn}() is xs:${type}`);
    const parts = /^(-?\d+)-(\d\d)-(\d\d)/.exec(v.toString())!;
    return [intOf(parseInt(parts[part + 1]!, 10))];
  });
}

// xs: constructor functions: `cast as T?`.
for (const t of CAST_TARGETS) {
  const type: QName = { ns: XS_NS, local: t };
  def(t, [1], (_c, a) => castAs(a[0]!, type, true), XS_NS);
}

/** The built-in function `name` with `arity` arguments, or undefined when there is none (or it is not supported). */
export function lookupBuiltin(name: QName, arity: number): FunctionImpl | undefined {
  if (name.ns === FN_NS && name.local === 'concat' && arity >= 2) return concat;
  return TABLE.get(`{${name.ns}}${name.local}#${arity}`);
}

/** Names (fn namespace) the table knows, for reporting. */
export function builtinNames(): string[] {
  return [...new Set([...TABLE.keys()].map((k) => k.replace(/#\d+$/, '')))].concat(`{${FN_NS}}concat`);
}
