import SaxonJS from 'saxon-js';
import {
  Untyped,
  XPathError,
  isNode,
  type Atomic,
  type Item,
  type Sequence,
} from '../../../../src/validation/compiled/model';
import { castAtomic, stringOf, typeOf } from '../../../../src/validation/compiled/runtime';

/**
 * Differential testing against SaxonJS: an operand is written once as a spec ('i:5' integer, 'd:1.5' decimal,
 * 'D:1.5e0' double, 'f:1.5' float, 'u:…' untypedAtomic, 's:…' string, 'b:true' boolean, 'date:…', 'dateTime:…',
 * 'time:…', 'dtd:…' dayTimeDuration, 'ymd:…' yearMonthDuration, 'uri:…' anyURI) and turned into both an XPath
 * expression for SaxonJS and the runtime's value; results are compared as "type:string" lists or "ERR:code".
 */

const TYPES: Record<string, string> = {
  f: 'float',
  u: 'untypedAtomic',
  date: 'date',
  dateTime: 'dateTime',
  time: 'time',
  dtd: 'dayTimeDuration',
  ymd: 'yearMonthDuration',
  dur: 'duration',
  uri: 'anyURI',
};

function quote(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function split(spec: string): [string, string] {
  const k = spec.indexOf(':');
  return [spec.substring(0, k), spec.substring(k + 1)];
}

/** The XPath expression for an operand spec. */
export function xp(spec: string | readonly string[]): string {
  if (typeof spec !== 'string') return `(${spec.map(xp).join(', ')})`;
  const [t, v] = split(spec);
  switch (t) {
    case 'i':
    case 'd':
      return v.startsWith('-') ? `(${v})` : v;
    case 'D':
      return `xs:double(${quote(v)})`;
    case 's':
      return quote(v);
    case 'b':
      return `${v}()`;
  }
  const type = TYPES[t];
  if (!type) throw new Error(`bad spec ${spec}`);
  return `xs:${type}(${quote(v)})`;
}

/** The runtime value for an operand spec. */
export function val(spec: string): Atomic {
  const [t, v] = split(spec);
  switch (t) {
    case 'i':
      return castAtomic(v, 'integer');
    case 'd':
      return castAtomic(castAtomic(v, 'decimal'), 'decimal');
    case 'D':
      return castAtomic(v, 'double');
    case 's':
      return v;
    case 'b':
      return v === 'true';
  }
  const type = TYPES[t];
  if (!type) throw new Error(`bad spec ${spec}`);
  return type === 'untypedAtomic' ? new Untyped(v) : castAtomic(v, type);
}

export function seqOf(spec: string | readonly string[]): Sequence {
  return typeof spec === 'string' ? [val(spec)] : spec.map(val);
}

const TYPE_TAG =
  "if (. instance of node()) then 'node' else if (. instance of xs:integer) then 'integer' " +
  "else if (. instance of xs:decimal) then 'decimal' else if (. instance of xs:double) then 'double' " +
  "else if (. instance of xs:float) then 'float' else if (. instance of xs:untypedAtomic) then 'untypedAtomic' " +
  "else if (. instance of xs:string) then 'string' else if (. instance of xs:boolean) then 'boolean' " +
  "else if (. instance of xs:anyURI) then 'anyURI' else if (. instance of xs:dateTime) then 'dateTime' " +
  "else if (. instance of xs:date) then 'date' else if (. instance of xs:time) then 'time' " +
  "else if (. instance of xs:dayTimeDuration) then 'dayTimeDuration' " +
  "else if (. instance of xs:yearMonthDuration) then 'yearMonthDuration' " +
  "else if (. instance of xs:duration) then 'duration' else 'other'";

type SaxonContext = Parameters<typeof SaxonJS.XPath.evaluate>[1];

/** SaxonJS's result of `expr` as "type:string" per item, or ["ERR:code"]. */
export function saxon(expr: string, context?: unknown): string[] {
  // SaxonJS prints its static warnings (e.g. "comparison can succeed only if…") on the console.
  const warn = console.error;
  console.error = () => undefined;
  try {
    const r = SaxonJS.XPath.evaluate(
      `for $v in (${expr}) return $v ! ((${TYPE_TAG}) || ':' || string(.))`,
      (context ?? null) as SaxonContext,
      { resultForm: 'array' },
    ) as unknown[];
    return r.map(String);
  } catch (e) {
    // SaxonJS's own failures (e.g. a decimal compared with an infinite double) carry no code; the runtime reports
    // them as FOER0000.
    return [`ERR:${(e as { code?: string }).code ?? 'FOER0000'}`];
  } finally {
    console.error = warn;
  }
}

export function show(item: Item): string {
  if (isNode(item)) return `node:${stringOf(item)}`;
  return `${typeOf(item)}:${stringOf(item)}`;
}

/** The runtime's result of `f` in the same form as saxon(). */
export function ours(f: () => Sequence | Atomic): string[] {
  try {
    const r = f();
    const seq: readonly Item[] = Array.isArray(r) ? r : [r as Atomic];
    return seq.map(show);
  } catch (e) {
    if (e instanceof XPathError) return [`ERR:${e.code}`];
    throw e;
  }
}

export interface Mismatch {
  expr: string;
  saxon: string[];
  ours: string[];
}

/** Collects mismatches (the test prints them all, with the expression and both results). */
export class Differ {
  readonly mismatches: Mismatch[] = [];
  count = 0;
  check(expr: string, f: () => Sequence | Atomic, context?: unknown): void {
    this.count++;
    const s = saxon(expr, context);
    const o = ours(f);
    if (s.length !== o.length || s.some((x, k) => x !== o[k])) this.mismatches.push({ expr, saxon: s, ours: o });
  }
  report(): string {
    return this.mismatches
      .map((m) => `${m.expr}\n  saxon: ${m.saxon.join(' | ')}\n  ours:  ${m.ours.join(' | ')}`)
      .join('\n');
  }
}
