import type { CompiledFilter, FilterNode } from './compile-filter';

/**
 * Evaluation rules (decided here, documented in docs/decisions.md):
 * - A variable is read only from the record's own properties; a missing one (or one holding anything but a string,
 *   a finite number or a boolean) is "absent".
 * - `==` and `!=` are false when either side is absent, so a filter on a field an event does not carry never matches
 *   and never throws. Same types compare exactly (ordinal for strings, as C#). A number and a string are equal when the
 *   string is the plain decimal spelling of that number (details values are all strings: `attempt == 3`).
 * - `&&`, `||` and `!` treat only `true` as true.
 * - String methods on an absent or non-string value give false (predicates) or absent (ToLower/ToUpper).
 * - The filter passes only when the result is exactly `true`.
 */

type Value = string | number | boolean | undefined;

const DECIMAL = /^-?\d+(?:\.\d+)?$/;

function readVar(vars: Record<string, unknown>, name: string): Value {
  if (!Object.hasOwn(vars, name)) return undefined;
  const v = vars[name];
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return undefined;
}

function equal(a: string | number | boolean, b: string | number | boolean): boolean {
  if (typeof a === typeof b) return a === b;
  if (typeof a === 'string' && typeof b === 'number') return DECIMAL.test(a) && Number(a) === b;
  if (typeof a === 'number' && typeof b === 'string') return DECIMAL.test(b) && Number(b) === a;
  return false;
}

function run(n: FilterNode, vars: Record<string, unknown>): Value {
  switch (n.k) {
    case 'lit':
      return n.v;
    case 'var':
      return readVar(vars, n.name);
    case 'not':
      return run(n.a, vars) !== true;
    case 'and':
      return run(n.a, vars) === true && run(n.b, vars) === true;
    case 'or':
      return run(n.a, vars) === true || run(n.b, vars) === true;
    case 'eq':
    case 'ne': {
      const a = run(n.a, vars);
      const b = run(n.b, vars);
      if (a === undefined || b === undefined) return false;
      return equal(a, b) === (n.k === 'eq');
    }
    case 'match': {
      const s = run(n.recv, vars);
      return typeof s === 'string' && n.re.test(s);
    }
    case 'call': {
      const s = run(n.recv, vars);
      const arg = n.arg ? run(n.arg, vars) : undefined;
      switch (n.m) {
        case 'ToLower':
          return typeof s === 'string' ? s.toLowerCase() : undefined;
        case 'ToUpper':
          return typeof s === 'string' ? s.toUpperCase() : undefined;
        case 'StartsWith':
          return typeof s === 'string' && typeof arg === 'string' && s.startsWith(arg);
        case 'EndsWith':
          return typeof s === 'string' && typeof arg === 'string' && s.endsWith(arg);
        case 'Contains':
          return typeof s === 'string' && typeof arg === 'string' && s.includes(arg);
        case 'Equals':
          return typeof s === 'string' && typeof arg === 'string' && s === arg;
      }
    }
  }
}

/** True when the event's variables satisfy the filter. Never throws for any `vars`. */
export function evaluate(compiled: CompiledFilter, vars: Record<string, unknown>): boolean {
  if (typeof vars !== 'object' || vars === null) return run(compiled.root, {}) === true;
  try {
    return run(compiled.root, vars) === true;
  } catch {
    // Only a hostile `vars` (a throwing getter or proxy) gets here; such an event does not pass.
    return false;
  }
}
