import type { Decimal } from './model';

/**
 * Exact arithmetic on xs:decimal strings (BigInt with a scale): amounts never pass through floating point, so
 * nothing is rounded that the document did not round.
 */

const DECIMAL = /^([+-])?(\d*)(?:\.(\d*))?$/;

/** A decimal as an integer count of 10^-scale units. */
export interface Scaled {
  units: bigint;
  scale: number;
}

export function isDecimal(s: string): boolean {
  return /^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(s);
}

export function parse(s: Decimal): Scaled {
  const m = DECIMAL.exec(s.trim());
  if (!m || !isDecimal(s.trim())) throw new RangeError(`"${s}" is not an xs:decimal`);
  const frac = m[3] ?? '';
  const units = BigInt(`${m[2] || '0'}${frac}`) * (m[1] === '-' ? -1n : 1n);
  return { units, scale: frac.length };
}

function align(a: Scaled, b: Scaled): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale), scale];
}

export function format(units: bigint, scale: number): Decimal {
  const neg = units < 0n;
  const digits = (neg ? -units : units).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale);
  return `${neg ? '-' : ''}${int}${scale > 0 ? `.${frac}` : ''}`;
}

export function add(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = align(parse(a), parse(b));
  return format(x + y, scale);
}

export function subtract(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = align(parse(a), parse(b));
  return format(x - y, scale);
}

/** -1, 0 or 1; "1.0" and "1.00" compare equal. */
export function compare(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const [x, y] = align(parse(a), parse(b));
  return x < y ? -1 : x > y ? 1 : 0;
}
