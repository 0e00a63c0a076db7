/**
 * xmldom 0.9 builds a new regular expression for every end tag it parses (lib/sax.js: `g.reg('^', g.QName_group,
 * g.S_OPT, '$')`): the source of a QName with all its Unicode ranges, joined and compiled again each time. On
 * e-invoices,
 * which are mostly end tags, that was a third of the parse time (known upstream: xmldom/xmldom#950, unfixed in 0.9.12).
 *
 * The expressions it builds are fixed combinations of the grammar's own constants, compiled without the global or
 * sticky flag, so one compiled instance can serve every call: `reg` is wrapped to return the instance built for the
 * same
 * arguments (compared by identity: the grammar's RegExp constants and short literal strings). The parse result is the
 * same; only the repeated construction goes. If a future xmldom no longer has `reg`, nothing is wrapped.
 */

type RegFn = (this: unknown, ...parts: Array<RegExp | string>) => RegExp;

interface Grammar {
  reg?: RegFn;
}

/** Bounded, in case a caller ever passes freshly made expressions (every one would be a new key). */
const MAX_ENTRIES = 256;
const LEAF = Symbol('compiled');

type Trie = Map<unknown, Trie | RegExp>;

let installed: { original: RegFn } | undefined;

/** Wraps xmldom's grammar `reg` once; returns the original (unwrapped) function, or undefined when absent. */
export function installXmldomRegexCache(): RegFn | undefined {
  if (installed) return installed.original;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const grammar = require('@xmldom/xmldom/lib/grammar') as Grammar;
  const original = grammar.reg;
  if (typeof original !== 'function') return undefined;
  const root: Trie = new Map();
  let entries = 0;
  grammar.reg = function cachedReg(this: unknown, ...parts: Array<RegExp | string>): RegExp {
    // Called without a receiver, `reg` has its own argument check ("use regg"): keep it.
    if (this === undefined) return original.apply(this, parts);
    let node = root;
    for (const part of parts) {
      let next = node.get(part) as Trie | undefined;
      if (!next) {
        if (entries >= MAX_ENTRIES) return original.apply(this, parts);
        next = new Map();
        node.set(part, next);
      }
      node = next;
    }
    let compiled = node.get(LEAF) as RegExp | undefined;
    if (!compiled) {
      compiled = original.apply(this, parts);
      // Only stateless expressions may be shared (exec on a global or sticky one moves lastIndex).
      if (compiled.global || compiled.sticky) return compiled;
      node.set(LEAF, compiled);
      entries++;
    }
    return compiled;
  };
  installed = { original };
  return original;
}
