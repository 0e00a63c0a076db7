/**
 * A scanner run before jsep. jsep parses a large JavaScript subset and reports no positions for nodes; scanning first
 * refuses every character and operator outside the filter language at its exact column, with a hint, and gives the
 * positions of identifiers and literals so later checks can point at the offending part too.
 */

export type TokenKind = 'identifier' | 'string' | 'number' | 'punct';

export interface Token {
  readonly kind: TokenKind;
  /** Raw text (string literals with their quotes). */
  readonly text: string;
  /** 0-based offset in the filter text. */
  readonly index: number;
}

export class FilterSyntaxError extends Error {
  constructor(
    readonly index: number,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'FilterSyntaxError';
  }
}

const ALLOWED_PUNCT = ['==', '!=', '&&', '||', '!', '(', ')', '.', ','] as const;

/** Operators of the wider JavaScript grammar, longest first, with the advice shown when one is used. */
const REFUSED_OPERATORS: ReadonlyArray<readonly [string, string]> = [
  ['>>>=', 'bit operators are not supported'],
  ['===', 'use == instead of ==='],
  ['!==', 'use != instead of !=='],
  ['**=', 'assignment is not allowed'],
  ['<<=', 'assignment is not allowed'],
  ['>>=', 'assignment is not allowed'],
  ['>>>', 'bit operators are not supported'],
  ['...', 'spread is not supported'],
  ['&&=', 'assignment is not allowed'],
  ['||=', 'assignment is not allowed'],
  ['??=', 'assignment is not allowed'],
  ['=>', 'functions are not allowed'],
  ['?.', 'optional chaining is not supported'],
  ['??', 'use || instead of ??'],
  ['<=', 'only == and != compare values'],
  ['>=', 'only == and != compare values'],
  ['<<', 'bit operators are not supported'],
  ['>>', 'bit operators are not supported'],
  ['**', 'arithmetic is not supported'],
  ['++', 'assignment is not allowed'],
  ['--', 'assignment is not allowed'],
  ['+=', 'assignment is not allowed'],
  ['-=', 'assignment is not allowed'],
  ['*=', 'assignment is not allowed'],
  ['/=', 'assignment is not allowed'],
  ['%=', 'assignment is not allowed'],
  ['&=', 'assignment is not allowed'],
  ['|=', 'assignment is not allowed'],
  ['^=', 'assignment is not allowed'],
  ['=', 'assignment is not allowed (use == to compare)'],
  ['<', 'only == and != compare values'],
  ['>', 'only == and != compare values'],
  ['+', 'arithmetic is not supported'],
  ['-', 'arithmetic is not supported'],
  ['*', 'arithmetic is not supported'],
  ['/', 'arithmetic is not supported'],
  ['%', 'arithmetic is not supported'],
  ['&', 'bit operators are not supported (use && for "and")'],
  ['|', 'bit operators are not supported (use || for "or")'],
  ['^', 'bit operators are not supported'],
  ['~', 'bit operators are not supported'],
  ['?', 'the conditional operator is not supported'],
  [':', 'the conditional operator is not supported'],
  ['[', 'indexing is not supported'],
  [']', 'indexing is not supported'],
  ['{', 'objects and blocks are not supported'],
  ['}', 'objects and blocks are not supported'],
  [';', 'a filter is a single expression'],
  ['`', 'template strings are not supported (use "…")'],
  ['#', 'private names are not supported'],
  ['@', 'decorators are not supported'],
];

const isIdentStart = (c: string): boolean => /[A-Za-z_$]/.test(c);
const isIdentPart = (c: string): boolean => /[A-Za-z0-9_$]/.test(c);
const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';

const NUMBER = /^(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?/;

export function scan(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) {
        if (text[j] === '\\') j++;
        if (text[j] === '\n' || text[j] === '\r') throw new FilterSyntaxError(j, 'line break inside a string literal');
        j++;
      }
      if (j >= text.length) throw new FilterSyntaxError(i, 'unclosed string literal');
      tokens.push({ kind: 'string', text: text.slice(i, j + 1), index: i });
      i = j + 1;
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(text[i + 1] ?? ''))) {
      const m = NUMBER.exec(text.slice(i, i + 64));
      const len = m ? m[0].length : 1;
      if (isIdentPart(text[i + len] ?? '') || text[i + len] === '.') {
        throw new FilterSyntaxError(i, 'invalid number (only decimal numbers such as 3 or 2.5)');
      }
      tokens.push({ kind: 'number', text: text.slice(i, i + len), index: i });
      i += len;
      continue;
    }
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < text.length && isIdentPart(text[j] as string)) j++;
      tokens.push({ kind: 'identifier', text: text.slice(i, j), index: i });
      i = j;
      continue;
    }
    const refused = REFUSED_OPERATORS.find(([op]) => text.startsWith(op, i));
    // `!==`, `===` must be refused before the allowed `!=` / `==` prefix is taken.
    if (refused && refused[0].length > 2) throw new FilterSyntaxError(i, `"${refused[0]}": ${refused[1]}`);
    const allowed = ALLOWED_PUNCT.find((op) => text.startsWith(op, i));
    if (allowed) {
      tokens.push({ kind: 'punct', text: allowed, index: i });
      i += allowed.length;
      continue;
    }
    if (refused) throw new FilterSyntaxError(i, `"${refused[0]}": ${refused[1]}`);
    const code = c.codePointAt(0) ?? 0;
    const shown =
      code < 0x20 || code === 0x7f
        ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
        : `"${String.fromCodePoint(code)}"`;
    throw new FilterSyntaxError(i, `unexpected character ${shown} (names use A-Z, a-z, 0-9, _ and $)`);
  }
  return tokens;
}
