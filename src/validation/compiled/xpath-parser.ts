import {
  FN_NS,
  Unsupported,
  XPathError,
  type Axis,
  type Expr,
  type NamespaceResolver,
  type NodeTest,
  type QName,
  type SequenceType,
  type Step,
} from './model';

/**
 * The XPath 2.0 parser of the compiled Schematron engine: XPath text (a rule's test, a variable's select, a template's
 * match pattern) to the expression tree of model.ts, with every name resolved at parse time.
 *
 * It follows the W3C XPath 2.0 grammar and its lexical rules: keywords are not reserved (`div`, `and`, `to`, … are
 * operators only where an operator can stand, names elsewhere); a name followed by `(` is a function call unless it is a
 * kind test or `if`; a name followed by `::` is an axis; comments `(: … :)` nest. Syntax errors are XPST0003, an
 * undeclared prefix XPST0081; constructs the engine does not model (schema-element(), element(n, type), …) throw
 * Unsupported so that the pack runs on SaxonJS instead.
 */

// ---------------------------------------------------------------------------------------------------------------------
// Tokens

type TokenKind =
  /** A name: NCName, prefix:local, prefix:* or *:local (`v` is the lexical form). */
  | 'name'
  /** The wildcard `*` alone (a name test or the multiplication operator). */
  | 'star'
  | 'string'
  | 'integer'
  | 'decimal'
  | 'double'
  /** Punctuation and symbolic operators (`v` is the symbol). */
  | 'sym'
  | 'eof';

interface Token {
  readonly kind: TokenKind;
  readonly v: string;
  /** Offset in the expression text. */
  readonly pos: number;
}

const NAME_START = /[\p{L}_]/u;
const NAME_CHAR = /[\p{L}\p{N}\p{M}_.\-\u00B7\u203F\u2040]/u;
const NUMBER = /(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;
/** Two-character symbols first: the longest match wins. */
const SYMBOLS = ['::', '..', '//', '!=', '<=', '>=', '<<', '>>', '(', ')', '[', ']', ',', '/', '@', '.', '=', '<', '>'];
const SYMBOL_START = new Set(SYMBOLS.map((sym) => sym.charAt(0)));

/** NCName start character (ASCII first: most names are). */
function isNameStart(c: string | undefined): boolean {
  if (c === undefined || c === '') return false;
  const code = c.charCodeAt(0);
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code === 95) return true;
  return code >= 128 && NAME_START.test(c);
}

function isNameChar(c: string | undefined): boolean {
  if (c === undefined || c === '') return false;
  const code = c.charCodeAt(0);
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57)) return true;
  if (code === 95 || code === 45 || code === 46) return true;
  return code >= 128 && NAME_CHAR.test(c);
}
const SINGLE_SYMBOLS = new Set(['|', '+', '-', '$', '?']);

function syntaxError(text: string, pos: number, message: string): XPathError {
  return new XPathError('XPST0003', `XPath syntax error at offset ${pos} in "${text}": ${message}`);
}

/** Splits an expression into tokens; whitespace and (nested) comments separate tokens and are dropped. */
function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = text.length;
  const ncname = (from: number): number => {
    let j = from;
    while (j < n && isNameChar(text[j])) j++;
    return j;
  };
  while (i < n) {
    const c = text.charAt(i);
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '(' && text[i + 1] === ':') {
      // A comment; comments nest.
      const start = i;
      let depth = 0;
      do {
        if (i >= n) throw syntaxError(text, start, 'unterminated comment');
        if (text[i] === '(' && text[i + 1] === ':') {
          depth++;
          i += 2;
        } else if (text[i] === ':' && text[i + 1] === ')') {
          depth--;
          i += 2;
        } else i++;
      } while (depth > 0);
      continue;
    }
    const pos = i;
    if (c === '"' || c === "'") {
      let v = '';
      i++;
      for (;;) {
        if (i >= n) throw syntaxError(text, pos, 'unterminated string literal');
        if (text[i] === c) {
          if (text[i + 1] === c) {
            v += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        v += text.charAt(i++);
      }
      out.push({ kind: 'string', v, pos });
      continue;
    }
    if ((c >= '0' && c <= '9') || (c === '.' && /[0-9]/.test(text.charAt(i + 1)))) {
      NUMBER.lastIndex = i;
      const v = NUMBER.exec(text)?.[0] ?? c;
      i += v.length;
      if (isNameStart(text[i])) throw syntaxError(text, i, `a name cannot follow the number ${v} without a space`);
      out.push({ kind: /[eE]/.test(v) ? 'double' : v.includes('.') ? 'decimal' : 'integer', v, pos });
      continue;
    }
    if (isNameStart(c)) {
      let j = ncname(i + 1);
      // prefix:local or prefix:* (no space around the colon; `name::` is an axis, not a QName).
      if (text[j] === ':' && text[j + 1] !== ':') {
        if (isNameStart(text[j + 1])) j = ncname(j + 2);
        else if (text[j + 1] === '*') j += 2;
      }
      out.push({ kind: 'name', v: text.slice(i, j), pos });
      i = j;
      continue;
    }
    if (c === '*') {
      if (text[i + 1] === ':' && isNameStart(text[i + 2])) {
        const j = ncname(i + 3);
        out.push({ kind: 'name', v: text.slice(i, j), pos });
        i = j;
      } else {
        out.push({ kind: 'star', v: '*', pos });
        i++;
      }
      continue;
    }
    const sym = SYMBOL_START.has(c) ? SYMBOLS.find((s) => text.startsWith(s, i)) : undefined;
    if (sym !== undefined) {
      out.push({ kind: 'sym', v: sym, pos });
      i += sym.length;
      continue;
    }
    if (SINGLE_SYMBOLS.has(c)) {
      out.push({ kind: 'sym', v: c, pos });
      i++;
      continue;
    }
    throw syntaxError(text, i, `unexpected character '${c}'`);
  }
  out.push({ kind: 'eof', v: '', pos: n });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// Grammar tables

const FORWARD_AXES: ReadonlySet<string> = new Set([
  'child',
  'descendant',
  'attribute',
  'self',
  'descendant-or-self',
  'following-sibling',
  'following',
  'namespace',
]);
const REVERSE_AXES: ReadonlySet<string> = new Set([
  'parent',
  'ancestor',
  'preceding-sibling',
  'preceding',
  'ancestor-or-self',
]);

/** Kind test names: a name followed by `(` that is not a function call. */
const KIND_TESTS: ReadonlySet<string> = new Set([
  'node',
  'text',
  'comment',
  'processing-instruction',
  'element',
  'attribute',
  'document-node',
  'schema-element',
  'schema-attribute',
]);
/** Names that cannot be function names (XPath 2.0 A.3): kind tests plus these. */
const RESERVED_FUNCTION_NAMES: ReadonlySet<string> = new Set([
  ...KIND_TESTS,
  'if',
  'item',
  'empty-sequence',
  'typeswitch',
]);

const GENERAL_COMPARISONS: ReadonlySet<string> = new Set(['=', '!=', '<', '<=', '>', '>=']);
const VALUE_COMPARISONS: ReadonlySet<string> = new Set(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);
const NODE_COMPARISONS: ReadonlySet<string> = new Set(['is', '<<', '>>']);

const DESCENDANT_OR_SELF_NODE: Step = {
  k: 'axis',
  axis: 'descendant-or-self',
  test: { k: 'kind', kind: 'node' },
  preds: [],
};

// ---------------------------------------------------------------------------------------------------------------------
// Parser

class Parser {
  private readonly tokens: Token[];
  private i = 0;

  constructor(
    private readonly text: string,
    private readonly ns: NamespaceResolver,
  ) {
    this.tokens = tokenize(text);
  }

  // --- token helpers ---

  private peek(ahead = 0): Token {
    return this.tokens[Math.min(this.i + ahead, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.i++;
    return t;
  }

  private isSym(v: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === 'sym' && t.v === v;
  }

  private isName(v: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === 'name' && t.v === v;
  }

  private error(message: string, t: Token = this.peek()): XPathError {
    return syntaxError(this.text, t.pos, message);
  }

  private describe(t: Token): string {
    if (t.kind === 'eof') return 'end of expression';
    if (t.kind === 'string') return `string literal "${t.v}"`;
    return `'${t.v}'`;
  }

  private expectSym(v: string): Token {
    if (!this.isSym(v)) throw this.error(`expected '${v}', found ${this.describe(this.peek())}`);
    return this.next();
  }

  private expectName(v: string): Token {
    if (!this.isName(v)) throw this.error(`expected '${v}', found ${this.describe(this.peek())}`);
    return this.next();
  }

  isEmpty(): boolean {
    return this.peek().kind === 'eof';
  }

  expectEnd(): void {
    const t = this.peek();
    if (t.kind !== 'eof') throw this.error(`unexpected ${this.describe(t)}`);
  }

  // --- names ---

  private prefixUri(prefix: string, t: Token): string {
    const uri = this.ns(prefix);
    if (uri === undefined) {
      throw new XPathError('XPST0081', `Undeclared namespace prefix '${prefix}' at offset ${t.pos} in "${this.text}"`);
    }
    return uri;
  }

  /** A QName token (no wildcards) resolved; unprefixed names take `defaultNs`. */
  private qname(t: Token, defaultNs: string): QName {
    if (t.kind !== 'name' || t.v.includes('*')) throw this.error(`expected a name, found ${this.describe(t)}`, t);
    const colon = t.v.indexOf(':');
    if (colon < 0) return { ns: defaultNs, local: t.v };
    return { ns: this.prefixUri(t.v.slice(0, colon), t), local: t.v.slice(colon + 1) };
  }

  /** A name test (`*`, `p:*`, `*:l`, `p:l`, `l`); unprefixed names are in no namespace. */
  private nameTest(t: Token): NodeTest {
    if (t.kind === 'star') return { k: 'name', ns: '*', local: '*' };
    if (t.kind !== 'name') throw this.error(`expected a name test, found ${this.describe(t)}`, t);
    if (t.v.startsWith('*:')) return { k: 'name', ns: '*', local: t.v.slice(2) };
    if (t.v.endsWith(':*')) return { k: 'name', ns: this.prefixUri(t.v.slice(0, -2), t), local: '*' };
    const q = this.qname(t, '');
    return { k: 'name', ns: q.ns, local: q.local };
  }

  // --- expressions ---

  /** Expr ::= ExprSingle ("," ExprSingle)* */
  expr(): Expr {
    const first = this.exprSingle();
    if (!this.isSym(',')) return first;
    const items = [first];
    while (this.isSym(',')) {
      this.next();
      items.push(this.exprSingle());
    }
    return { k: 'seq', items };
  }

  private exprSingle(): Expr {
    const t = this.peek();
    if (t.kind === 'name') {
      if ((t.v === 'for' || t.v === 'some' || t.v === 'every') && this.isSym('$', 1)) return this.forOrQuantified();
      if (t.v === 'if' && this.isSym('(', 1)) return this.ifExpr();
    }
    return this.orExpr();
  }

  private forOrQuantified(): Expr {
    const keyword = this.next().v;
    const bindings: Array<{ name: QName; in: Expr }> = [];
    do {
      if (bindings.length > 0) this.next(); // the comma
      this.expectSym('$');
      const name = this.qname(this.next(), '');
      this.expectName('in');
      bindings.push({ name, in: this.exprSingle() });
    } while (this.isSym(','));
    if (keyword === 'for') {
      this.expectName('return');
      return { k: 'for', bindings, ret: this.exprSingle() };
    }
    this.expectName('satisfies');
    return { k: keyword === 'some' ? 'some' : 'every', bindings, sat: this.exprSingle() };
  }

  private ifExpr(): Expr {
    this.next();
    this.expectSym('(');
    const c = this.expr();
    this.expectSym(')');
    this.expectName('then');
    const t = this.exprSingle();
    this.expectName('else');
    return { k: 'if', c, t, e: this.exprSingle() };
  }

  private orExpr(): Expr {
    let l = this.andExpr();
    while (this.isName('or')) {
      this.next();
      l = { k: 'or', l, r: this.andExpr() };
    }
    return l;
  }

  private andExpr(): Expr {
    let l = this.comparisonExpr();
    while (this.isName('and')) {
      this.next();
      l = { k: 'and', l, r: this.comparisonExpr() };
    }
    return l;
  }

  /** Comparisons do not associate: `a = b = c` is a syntax error. */
  private comparisonExpr(): Expr {
    const l = this.rangeExpr();
    const t = this.peek();
    let e: Expr;
    if (t.kind === 'sym' && GENERAL_COMPARISONS.has(t.v)) {
      this.next();
      e = { k: 'gcmp', op: t.v as '=', l, r: this.rangeExpr() };
    } else if (t.kind === 'name' && VALUE_COMPARISONS.has(t.v)) {
      this.next();
      e = { k: 'vcmp', op: t.v as 'eq', l, r: this.rangeExpr() };
    } else if ((t.kind === 'name' || t.kind === 'sym') && NODE_COMPARISONS.has(t.v)) {
      this.next();
      e = { k: 'ncmp', op: t.v as 'is', l, r: this.rangeExpr() };
    } else return l;
    const after = this.peek();
    if (
      (after.kind === 'sym' && (GENERAL_COMPARISONS.has(after.v) || NODE_COMPARISONS.has(after.v))) ||
      (after.kind === 'name' && (VALUE_COMPARISONS.has(after.v) || after.v === 'is'))
    ) {
      throw this.error(`comparisons do not chain: parenthesize before ${this.describe(after)}`);
    }
    return e;
  }

  private rangeExpr(): Expr {
    const l = this.additiveExpr();
    if (!this.isName('to')) return l;
    this.next();
    const e: Expr = { k: 'range', l, r: this.additiveExpr() };
    if (this.isName('to')) throw this.error("ranges do not chain: parenthesize before 'to'");
    return e;
  }

  private additiveExpr(): Expr {
    let l = this.multiplicativeExpr();
    while (this.isSym('+') || this.isSym('-')) {
      const op = this.next().v as '+' | '-';
      l = { k: 'arith', op, l, r: this.multiplicativeExpr() };
    }
    return l;
  }

  private multiplicativeExpr(): Expr {
    let l = this.unionExpr();
    for (;;) {
      const t = this.peek();
      let op: '*' | 'div' | 'idiv' | 'mod';
      if (t.kind === 'star') op = '*';
      else if (t.kind === 'name' && (t.v === 'div' || t.v === 'idiv' || t.v === 'mod')) op = t.v;
      else return l;
      this.next();
      l = { k: 'arith', op, l, r: this.unionExpr() };
    }
  }

  private unionExpr(): Expr {
    let l = this.intersectExceptExpr();
    while (this.isSym('|') || this.isName('union')) {
      this.next();
      l = { k: 'union', l, r: this.intersectExceptExpr() };
    }
    return l;
  }

  private intersectExceptExpr(): Expr {
    let l = this.instanceofExpr();
    while (this.isName('intersect') || this.isName('except')) {
      const k = this.next().v as 'intersect' | 'except';
      l = { k, l, r: this.instanceofExpr() };
    }
    return l;
  }

  private instanceofExpr(): Expr {
    const e = this.treatExpr();
    if (!(this.isName('instance') && this.isName('of', 1))) return e;
    this.i += 2;
    return { k: 'instanceOf', e, type: this.sequenceType() };
  }

  private treatExpr(): Expr {
    const e = this.castableExpr();
    if (!(this.isName('treat') && this.isName('as', 1))) return e;
    this.i += 2;
    return { k: 'treatAs', e, type: this.sequenceType() };
  }

  private castableExpr(): Expr {
    const e = this.castExpr();
    if (!(this.isName('castable') && this.isName('as', 1))) return e;
    this.i += 2;
    const { type, optional } = this.singleType();
    return { k: 'castable', e, type, optional };
  }

  private castExpr(): Expr {
    const e = this.unaryExpr();
    if (!(this.isName('cast') && this.isName('as', 1))) return e;
    this.i += 2;
    const { type, optional } = this.singleType();
    return { k: 'cast', e, type, optional };
  }

  private unaryExpr(): Expr {
    if (this.isSym('-') || this.isSym('+')) {
      const op = this.next().v;
      const e = this.unaryExpr();
      return { k: op === '-' ? 'neg' : 'plus', e };
    }
    return this.pathExpr();
  }

  // --- paths ---

  /** Whether the current token can start a step (decides whether a leading `/` stands alone). */
  private startsStep(): boolean {
    const t = this.peek();
    switch (t.kind) {
      case 'name':
      case 'star':
      case 'string':
      case 'integer':
      case 'decimal':
      case 'double':
        return true;
      case 'sym':
        return ['@', '.', '..', '(', '$'].includes(t.v);
      default:
        return false;
    }
  }

  private pathExpr(): Expr {
    if (this.isSym('/')) {
      this.next();
      if (!this.startsStep()) return { k: 'path', root: 'root', steps: [] };
      return { k: 'path', root: 'root', steps: this.relativeSteps() };
    }
    if (this.isSym('//')) {
      this.next();
      return { k: 'path', root: 'rootDescendant', steps: [DESCENDANT_OR_SELF_NODE, ...this.relativeSteps()] };
    }
    const steps = this.relativeSteps();
    const only = steps[0];
    // A single primary without predicates is that expression, not a path.
    if (steps.length === 1 && only?.k === 'filter' && only.preds.length === 0) return only.expr;
    return { k: 'path', root: 'none', steps };
  }

  /** RelativePathExpr ::= StepExpr (("/" | "//") StepExpr)* */
  private relativeSteps(): Step[] {
    const steps = [this.stepExpr()];
    for (;;) {
      if (this.isSym('/')) {
        this.next();
      } else if (this.isSym('//')) {
        this.next();
        steps.push(DESCENDANT_OR_SELF_NODE);
      } else return steps;
      steps.push(this.stepExpr());
    }
  }

  private stepExpr(): Step {
    const t = this.peek();
    if (t.kind === 'sym') {
      if (t.v === '@') {
        this.next();
        return this.axisStepRest('attribute', this.nodeTest('attribute'));
      }
      if (t.v === '..') {
        this.next();
        return this.axisStepRest('parent', { k: 'kind', kind: 'node' });
      }
    }
    if (t.kind === 'name' && this.isSym('::', 1)) {
      if (!FORWARD_AXES.has(t.v) && !REVERSE_AXES.has(t.v)) throw this.error(`unknown axis '${t.v}'`, t);
      if (t.v === 'namespace') throw new Unsupported(`the namespace axis is not supported ("${this.text}")`);
      this.i += 2;
      const axis = t.v as Axis;
      return this.axisStepRest(axis, this.nodeTest(axis === 'attribute' ? 'attribute' : 'element'));
    }
    if (t.kind === 'star' || (t.kind === 'name' && !(this.isSym('(', 1) && !KIND_TESTS.has(t.v)))) {
      // An abbreviated forward step: child::, or attribute:: for an attribute() test.
      const test = this.nodeTest('element');
      const axis: Axis = test.k === 'kind' && test.kind === 'attribute' ? 'attribute' : 'child';
      return this.axisStepRest(axis, test);
    }
    const expr = this.primaryExpr();
    return { k: 'filter', expr, preds: this.predicates() };
  }

  private axisStepRest(axis: Axis, test: NodeTest): Step {
    return { k: 'axis', axis, test, preds: this.predicates() };
  }

  private predicates(): Expr[] {
    const preds: Expr[] = [];
    while (this.isSym('[')) {
      this.next();
      preds.push(this.expr());
      this.expectSym(']');
    }
    return preds;
  }

  /** NodeTest ::= KindTest | NameTest; `principal` is the principal node kind of the axis (for the message only). */
  private nodeTest(principal: 'element' | 'attribute'): NodeTest {
    const t = this.peek();
    if (t.kind === 'name' && KIND_TESTS.has(t.v) && this.isSym('(', 1)) return this.kindTest();
    if (t.kind === 'name' || t.kind === 'star') {
      this.next();
      return this.nameTest(t);
    }
    throw this.error(`expected a node test (${principal} name or kind test), found ${this.describe(t)}`);
  }

  /** KindTest, positioned on its name. */
  private kindTest(): NodeTest {
    const t = this.next();
    this.expectSym('(');
    let test: NodeTest;
    switch (t.v) {
      case 'node':
      case 'text':
      case 'comment':
        test = { k: 'kind', kind: t.v };
        break;
      case 'processing-instruction': {
        const a = this.peek();
        if (a.kind === 'name' && !a.v.includes(':') && !a.v.includes('*')) {
          this.next();
          test = { k: 'kind', kind: 'pi', name: { ns: '', local: a.v } };
        } else if (a.kind === 'string') {
          this.next();
          test = { k: 'kind', kind: 'pi', name: { ns: '', local: a.v.trim() } };
        } else test = { k: 'kind', kind: 'pi' };
        break;
      }
      case 'element':
      case 'attribute': {
        const a = this.peek();
        let name: QName | '*' | undefined;
        if (a.kind === 'star') {
          this.next();
          name = '*';
        } else if (a.kind === 'name') {
          this.next();
          name = this.qname(a, '');
        }
        if (name !== undefined && this.isSym(',')) {
          throw new Unsupported(`${t.v}() with a type annotation needs schema types ("${this.text}")`);
        }
        test = name === undefined ? { k: 'kind', kind: t.v } : { k: 'kind', kind: t.v, name };
        break;
      }
      case 'document-node':
        if (!this.isSym(')')) {
          throw new Unsupported(`document-node() with an element test is not supported ("${this.text}")`);
        }
        test = { k: 'kind', kind: 'document' };
        break;
      default:
        throw new Unsupported(`${t.v}() needs a schema ("${this.text}")`);
    }
    this.expectSym(')');
    return test;
  }

  private primaryExpr(): Expr {
    const t = this.peek();
    switch (t.kind) {
      case 'string':
        this.next();
        return { k: 'string', v: t.v };
      case 'integer':
      case 'decimal':
      case 'double':
        this.next();
        return { k: t.kind, v: t.v };
      case 'name':
        if (this.isSym('(', 1)) return this.functionCall();
        break;
      case 'sym':
        if (t.v === '$') {
          this.next();
          return { k: 'var', name: this.qname(this.next(), '') };
        }
        if (t.v === '.') {
          this.next();
          return { k: 'context' };
        }
        if (t.v === '(') {
          this.next();
          if (this.isSym(')')) {
            this.next();
            return { k: 'seq', items: [] };
          }
          const e = this.expr();
          this.expectSym(')');
          return e;
        }
        break;
      default:
        break;
    }
    throw this.error(`expected an expression, found ${this.describe(t)}`);
  }

  private functionCall(): Expr {
    const t = this.next();
    if (RESERVED_FUNCTION_NAMES.has(t.v)) throw this.error(`'${t.v}' cannot be used as a function name`, t);
    const fn = this.qname(t, FN_NS);
    this.expectSym('(');
    const args: Expr[] = [];
    if (!this.isSym(')')) {
      args.push(this.exprSingle());
      while (this.isSym(',')) {
        this.next();
        args.push(this.exprSingle());
      }
    }
    this.expectSym(')');
    return { k: 'call', fn, args };
  }

  // --- types ---

  /** SingleType ::= AtomicType "?"? */
  private singleType(): { type: QName; optional: boolean } {
    const type = this.qname(this.next(), '');
    const optional = this.isSym('?');
    if (optional) this.next();
    return { type, optional };
  }

  /** SequenceType ::= ("empty-sequence" "(" ")") | (ItemType OccurrenceIndicator?) */
  sequenceType(): SequenceType {
    const t = this.peek();
    if (t.kind === 'name' && t.v === 'empty-sequence' && this.isSym('(', 1)) {
      this.i += 2;
      this.expectSym(')');
      return { k: 'empty' };
    }
    let item: Extract<SequenceType, { k: 'item' }>['item'];
    if (t.kind === 'name' && t.v === 'item' && this.isSym('(', 1)) {
      this.i += 2;
      this.expectSym(')');
      item = { k: 'anyItem' };
    } else if (t.kind === 'name' && KIND_TESTS.has(t.v) && this.isSym('(', 1)) {
      item = this.kindTest();
    } else if (t.kind === 'name' && !t.v.includes('*')) {
      this.next();
      item = { k: 'atomic', type: this.qname(t, '') };
    } else throw this.error(`expected a sequence type, found ${this.describe(t)}`);
    // Occurrence indicators bind to the type (XPath 2.0 A.2.2, occurrence-indicators).
    const o = this.peek();
    let occ: '' | '?' | '*' | '+' = '';
    if ((o.kind === 'sym' && (o.v === '?' || o.v === '+')) || o.kind === 'star') {
      this.next();
      occ = o.v as '?' | '+' | '*';
    }
    return { k: 'item', item, occ };
  }

  // --- XSLT 2.0 patterns ---

  /** Pattern ::= PathPattern ("|" PathPattern)* */
  pattern(): Expr {
    let l = this.pathPattern();
    while (this.isSym('|') || this.isName('union')) {
      this.next();
      l = { k: 'union', l, r: this.pathPattern() };
    }
    return l;
  }

  private pathPattern(): Expr {
    const t = this.peek();
    if (this.isSym('(')) {
      // A parenthesized pattern without predicates or further steps is the inner pattern itself.
      const steps = this.relativePatternSteps();
      const only = steps[0];
      if (steps.length === 1 && only?.k === 'filter' && only.preds.length === 0) return only.expr;
      return { k: 'path', root: 'none', steps };
    }
    if (t.kind === 'name' && (t.v === 'id' || t.v === 'key') && this.isSym('(', 1)) {
      throw new Unsupported(`a match pattern starting with ${t.v}() is not supported ("${this.text}")`);
    }
    if (this.isSym('/')) {
      this.next();
      if (!this.startsStep()) return { k: 'path', root: 'root', steps: [] };
      return { k: 'path', root: 'root', steps: this.relativePatternSteps() };
    }
    if (this.isSym('//')) {
      this.next();
      return { k: 'path', root: 'rootDescendant', steps: [DESCENDANT_OR_SELF_NODE, ...this.relativePatternSteps()] };
    }
    return { k: 'path', root: 'none', steps: this.relativePatternSteps() };
  }

  private relativePatternSteps(): Step[] {
    const steps = [this.patternStep()];
    for (;;) {
      if (this.isSym('/')) this.next();
      else if (this.isSym('//')) {
        this.next();
        steps.push(DESCENDANT_OR_SELF_NODE);
      } else return steps;
      steps.push(this.patternStep());
    }
  }

  /**
   * PatternStep ::= PatternAxis? NodeTest PredicateList, PatternAxis ::= child:: | attribute:: | @; also the XSLT 3.0
   * parenthesized pattern `(Pattern) PredicateList` (Saxon accepts it in 2.0 stylesheets, and packs use it), as a
   * filter step whose expression is the inner pattern.
   */
  private patternStep(): Step {
    const t = this.peek();
    if (this.isSym('(')) {
      this.next();
      const inner = this.pattern();
      this.expectSym(')');
      return { k: 'filter', expr: inner, preds: this.predicates() };
    }
    if (this.isSym('@')) {
      this.next();
      return this.axisStepRest('attribute', this.nodeTest('attribute'));
    }
    if (t.kind === 'name' && this.isSym('::', 1)) {
      if (t.v !== 'child' && t.v !== 'attribute') {
        throw this.error(`the ${t.v} axis is not allowed in a match pattern (only child:: and attribute::)`, t);
      }
      this.i += 2;
      return this.axisStepRest(t.v, this.nodeTest(t.v === 'attribute' ? 'attribute' : 'element'));
    }
    if (t.kind === 'name' || t.kind === 'star') {
      if (t.kind === 'name' && this.isSym('(', 1) && !KIND_TESTS.has(t.v)) {
        throw this.error(`a function call cannot be a step of a match pattern`, t);
      }
      const test = this.nodeTest('element');
      const axis: Axis = test.k === 'kind' && test.kind === 'attribute' ? 'attribute' : 'child';
      return this.axisStepRest(axis, test);
    }
    throw this.error(`expected a pattern step, found ${this.describe(t)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Entry points

/** Parses an XPath 2.0 expression; prefixes resolve through `ns` (unprefixed function names are in FN_NS). */
export function parseXPath(text: string, ns: NamespaceResolver): Expr {
  const p = new Parser(text, ns);
  if (p.isEmpty()) throw syntaxError(text, 0, 'empty expression');
  const e = p.expr();
  p.expectEnd();
  return e;
}

/** Parses a sequence type as written in an `as` attribute: `xs:decimal`, `xs:string?`, `element()*`, `item()*`, … */
export function parseSequenceType(text: string, ns: NamespaceResolver): SequenceType {
  const p = new Parser(text, ns);
  const t = p.sequenceType();
  p.expectEnd();
  return t;
}

/**
 * Parses an XSLT 2.0 match pattern into the expression tree: a `path` (child:: and attribute:: steps, `//` as a
 * descendant-or-self::node() step, predicates) or a left-nested `union` of paths. id()/key() heads are Unsupported.
 *
 * A parenthesized pattern (XSLT 3.0, as in `(/ubl:Invoice | /cn:CreditNote)[$isCVD]/cac:Item`) is a `filter` step of
 * the path, its expression the inner pattern. Such a pattern matches a node N when N is in the value of
 * `root(N)//(pattern)` (XSLT 3.0 §5.5.3), which holds for plain paths too.
 */
export function parsePattern(text: string, ns: NamespaceResolver): Expr {
  const p = new Parser(text, ns);
  if (p.isEmpty()) throw syntaxError(text, 0, 'empty pattern');
  const e = p.pattern();
  p.expectEnd();
  return e;
}
