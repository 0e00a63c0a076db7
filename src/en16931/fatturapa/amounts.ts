import { add, compare, format, parse, subtract } from '../decimal';
import type { Decimal } from '../model';

/**
 * The arithmetic FatturaPA needs beyond add/subtract: its prices are per unit (EN 16931 allows a base quantity), its
 * line discounts are per unit (EN 16931 line allowances are amounts), and its amounts have fixed decimal patterns.
 * BigInt with a scale, never floating point.
 */

/** Half away from zero, as commercial rounding does. */
function roundUnits(units: bigint, from: number, to: number): bigint {
  if (to >= from) return units * 10n ** BigInt(to - from);
  const div = 10n ** BigInt(from - to);
  const q = units / div;
  const r = units % div;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= div) return q + (units < 0n ? -1n : 1n);
  return q;
}

export function multiply(a: Decimal, b: Decimal): Decimal {
  const x = parse(a);
  const y = parse(b);
  return format(x.units * y.units, x.scale + y.scale);
}

/** a / b rounded to `scale` decimals; `exact` says whether nothing was rounded away. */
export function divide(a: Decimal, b: Decimal, scale: number): { value: Decimal; exact: boolean } {
  const x = parse(a);
  const y = parse(b);
  if (y.units === 0n) throw new RangeError('division by zero');
  // a/b = (x.units / 10^xs) / (y.units / 10^ys); computed with `scale + 1` extra digits, then rounded
  const extra = scale + 1;
  const num = x.units * 10n ** BigInt(y.scale + extra);
  const den = y.units * 10n ** BigInt(x.scale);
  const q = num / den;
  const exact = num % den === 0n && q % 10n === 0n;
  return { value: format(roundUnits(q, extra, scale), scale), exact };
}

/** Rounds to `scale` decimals (half away from zero). */
export function round(a: Decimal, scale: number): Decimal {
  const x = parse(a);
  return format(roundUnits(x.units, x.scale, scale), Math.max(scale, 0));
}

/**
 * FatturaPA's fixed patterns: at least `min` and at most `max` decimals ("10" → "10.00" for min 2). Trailing zeros past
 * `min` are dropped, so "12.50000000" stays "12.50"; more than `max` decimals are rounded (the caller decides if that
 * is
 * acceptable).
 */
export function fixed(a: Decimal, min: number, max = min): Decimal {
  const x = parse(a);
  let v = x.scale > max ? format(roundUnits(x.units, x.scale, max), max) : format(x.units, x.scale);
  const [int, frac = ''] = v.split('.');
  let f = frac.replace(/0+$/, '');
  if (f.length < min) f = f.padEnd(min, '0');
  v = f.length > 0 ? `${int}.${f}` : (int as string);
  return v;
}

export const sum = (values: readonly Decimal[]): Decimal => values.reduce((a, b) => add(a, b), '0.00');
export const negate = (a: Decimal): Decimal =>
  a.trim().startsWith('-') ? a.trim().slice(1) : compare(a, '0') === 0 ? a : `-${a.trim().replace(/^\+/, '')}`;
export const isNegative = (a: Decimal): boolean => compare(a, '0') < 0;
export const isZero = (a: Decimal): boolean => compare(a, '0') === 0;
export const equal = (a: Decimal, b: Decimal): boolean => compare(a, b) === 0;
export { add, subtract, compare };
