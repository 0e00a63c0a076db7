import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseXmlForReading } from '../../formats/xml/secure-parser';
import { lookupBuiltin } from './functions';
import { buildXdmTree } from './tree';
import {
  ATTRIBUTE,
  DOCUMENT,
  ELEMENT,
  FN_NS,
  TEXT,
  COMMENT,
  PI,
  Dec,
  Flt,
  Unsupported,
  Untyped,
  XPathError,
  functionKey,
  isNode,
  type Axis,
  type Atomic,
  type DynContext,
  type Expr,
  type FunctionImpl,
  type Item,
  type NodeTest,
  type QName,
  type Sequence,
  type SequenceType,
  type Step,
  type XNode,
} from './model';
import {
  arithmetic,
  atomize,
  decToNumber,
  otherString,
  typeOf,
  castAs,
  castableAs,
  convertTo,
  ebv,
  generalCompare,
  instanceOf,
  rangeTo,
  stringOf,
  unaryMinus,
  unaryPlus,
  valueCompare,
} from './runtime';

/**
 * XPath 2.0 expression trees (model.ts) turned into JavaScript closures, once per rule pack: each closure takes the
 * evaluation context and returns a sequence. Variables are resolved to frame slots at compile time; an expression that
 * depends on nothing but the document (an absolute path, a call on such paths, …) is computed once per document and
 * kept, so a rule on every invoice line reads the header once instead of once per line.
 */

/** The context of one evaluation: the XPath dynamic context plus the variable frame and the per-document state. */
export interface Ctx extends DynContext {
  /** Local variables of the rule or function being evaluated (slots assigned at compile time). */
  readonly vars: Sequence[];
  readonly run: RunState;
}

/** Per document: global variable values and kept document-constant subexpressions. */
export interface RunState {
  readonly doc: XNode;
  readonly globals: Array<Sequence | undefined>;
  readonly memo: Array<Sequence | undefined>;
  /** Global variable evaluators by slot (evaluated on first use, with the document as context). */
  readonly globalEvaluators: ReadonlyArray<Evaluator>;
  /** xsl:key indexes by slot, built on the first key() call on the document. */
  readonly keys: Array<Map<string, XNode[]> | undefined>;
}

export type Evaluator = (ctx: Ctx) => Sequence;

const EMPTY: Sequence = [];
const TRUE: Sequence = [true];
const FALSE: Sequence = [false];

function qkey(q: QName): string {
  return `{${q.ns}}${q.local}`;
}

/** A compiled stylesheet function, filled after all signatures are known (functions may call each other). */
export interface CompiledFunction {
  name: QName;
  arity: number;
  frameSize: number;
  impl: (run: RunState, args: readonly Sequence[]) => Sequence;
}

/** What an expression can see at compile time. */
export class Scope {
  private readonly slots = new Map<string, number>();
  constructor(
    readonly unit: CompileUnit,
    private readonly parent?: Scope,
    private readonly frame: { size: number } = { size: 0 },
  ) {}
  get frameSize(): number {
    return this.frame.size;
  }
  /** A child scope sharing the frame (for `for`, `some`, `every` and rule/function variables). */
  child(): Scope {
    return new Scope(this.unit, this, this.frame);
  }
  bind(name: QName): number {
    const slot = this.frame.size++;
    this.slots.set(qkey(name), slot);
    return slot;
  }
  lookup(name: QName): number | undefined {
    return this.slots.get(qkey(name)) ?? this.parent?.lookup(name);
  }
}

/** Everything one pack's expressions share: globals, functions, and the memo slots of document constants. */
export class CompileUnit {
  /** The stylesheet's file: URL, against which document() resolves; undefined when compiled from text alone. */
  constructor(readonly baseUri?: string) {}
  /** Documents read with document(), by resolved URL: loaded and built once per pack. */
  readonly documents = new Map<string, XNode>();
  readonly globalSlots = new Map<string, number>();
  readonly globalEvaluators: Evaluator[] = [];
  readonly functions = new Map<string, CompiledFunction>();
  /** xsl:key declarations by expanded name. */
  readonly keys = new Map<string, CompiledKey>();
  memoSlots = 0;
}

/** An xsl:key, compiled: which nodes it indexes, and the values it indexes each by. */
export interface CompiledKey {
  slot: number;
  matches: (n: XNode, run: RunState) => boolean;
  use: Evaluator;
  frameSize: number;
}

/**
 * The key under which an atomic value is indexed: XSLT compares key values with `eq`, untypedAtomic as a string, so
 * a string and a number never meet; NaN equals nothing.
 */
function keyValue(a: Atomic): string | undefined {
  if (typeof a === 'string') return `s${a}`;
  if (a instanceof Untyped) return `s${a.s}`;
  if (typeof a === 'number' || a instanceof Dec || a instanceof Flt) {
    const n = typeof a === 'number' ? a : a instanceof Dec ? decToNumber(a) : a.n;
    return Number.isNaN(n) ? undefined : `n${n}`;
  }
  if (typeof a === 'boolean') return `b${a}`;
  const t = typeOf(a);
  return `${t === 'anyURI' ? 's' : t}${otherString(a)}`;
}

/** The document's index for one key: every matching node under each of its `use` values, in document order. */
function buildKeyIndex(def: CompiledKey, run: RunState): Map<string, XNode[]> {
  const index = new Map<string, XNode[]>();
  const visit = (n: XNode): void => {
    if (def.matches(n, run)) {
      const ctx: Ctx = {
        item: n,
        pos: 1,
        size: 1,
        current: n,
        doc: run.doc,
        vars: new Array<Sequence>(def.frameSize),
        run,
      };
      for (const a of atomize(def.use(ctx))) {
        const k = keyValue(a);
        if (k === undefined) continue;
        const list = index.get(k);
        if (!list) index.set(k, [n]);
        else if (list[list.length - 1] !== n) list.push(n);
      }
    }
    for (const at of n.attrs) visit(at);
    for (const c of n.children) if (c.kind === ELEMENT) visit(c);
  };
  visit(run.doc);
  return index;
}

/** Code-list documents a pack reads are small; a larger one is not a code list. */
const MAX_CODE_LIST_BYTES = 16 * 1024 * 1024;

/**
 * document('literal'): a code list shipped in the pack beside the stylesheet (Factur-X's `…_codedb.xml`), read and
 * built once when the pack compiles, with the secure parser. Only a literal relative reference inside the pack's own
 * folder; anything else (a computed URI, another folder, another scheme) is not compiled.
 */
function compileDocumentCall(argExprs: readonly Expr[], unit: CompileUnit): Evaluator {
  const href = argExprs[0];
  if (argExprs.length !== 1 || href?.k !== 'string' || !unit.baseUri) {
    throw new Unsupported("document() other than document('a file of the pack')");
  }
  const url = new URL(href.v, unit.baseUri);
  const dir = new URL('.', unit.baseUri);
  if (url.protocol !== 'file:' || !url.href.startsWith(dir.href) || url.search || url.hash) {
    throw new Unsupported(`document('${href.v}') outside the pack`);
  }
  let doc = unit.documents.get(url.href);
  if (!doc) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(fileURLToPath(url));
    } catch (e) {
      throw new Unsupported(`document('${href.v}') cannot be read: ${(e as Error).message}`);
    }
    if (bytes.length > MAX_CODE_LIST_BYTES) throw new Unsupported(`document('${href.v}') is too large`);
    doc = buildXdmTree(parseXmlForReading(bytes, { maxBytes: MAX_CODE_LIST_BYTES }));
    unit.documents.set(url.href, doc);
  }
  const result: Sequence = [doc];
  return () => result;
}

/** key(name, values): the name a literal naming a key of the stylesheet; the document's own index. */
function compileKeyCall(argExprs: readonly Expr[], args: readonly Evaluator[], scope: Scope): Evaluator {
  const name = argExprs[0];
  if (args.length !== 2 || name?.k !== 'string' || name.v.includes(':')) {
    throw new Unsupported("key() other than key('unprefixed-name', values)");
  }
  const def = scope.unit.keys.get(qkey({ ns: '', local: name.v.trim() }));
  if (!def) throw new XPathError('XTDE1260', `key(): no xsl:key named ${name.v}`);
  const values = args[1]!;
  return (ctx) => {
    const index = (ctx.run.keys[def.slot] ??= buildKeyIndex(def, ctx.run));
    const atoms = atomize(values(ctx));
    if (atoms.length === 1) {
      const k = keyValue(atoms[0]!);
      return (k === undefined ? undefined : index.get(k)) ?? EMPTY;
    }
    const out: XNode[] = [];
    for (const a of atoms) {
      const k = keyValue(a);
      const list = k === undefined ? undefined : index.get(k);
      if (list) out.push(...list);
    }
    return sortNodes(out);
  };
}

/** What an expression depends on, for deciding whether it is a document constant. */
interface Deps {
  /** The context item, position or size. */
  focus: boolean;
  /** current(), or a local variable. */
  local: boolean;
}

const CONTEXT_FREE_ZERO_ARITY = new Set(['true', 'false', 'current-date', 'current-dateTime', 'current-time']);
const CONTEXT_DEPENDENT_FUNCTIONS = new Set(['lang', 'id', 'idref', 'base-uri', 'document-uri', 'static-base-uri']);

function depsOf(e: Expr, bound: Set<string>): Deps {
  const d: Deps = { focus: false, local: false };
  const merge = (x: Deps): void => {
    d.focus ||= x.focus;
    d.local ||= x.local;
  };
  switch (e.k) {
    case 'string':
    case 'integer':
    case 'decimal':
    case 'double':
      return d;
    case 'var':
      // Locals bound inside the expression itself do not make it depend on the outside.
      if (!bound.has(qkey(e.name))) d.local = true;
      return d;
    case 'context':
      d.focus = true;
      return d;
    case 'seq':
      e.items.forEach((x) => merge(depsOf(x, bound)));
      return d;
    case 'call': {
      if (e.fn.ns === FN_NS) {
        if (e.fn.local === 'current') d.local = true;
        if (e.args.length === 0 && !CONTEXT_FREE_ZERO_ARITY.has(e.fn.local)) d.focus = true;
        if (CONTEXT_DEPENDENT_FUNCTIONS.has(e.fn.local)) d.focus = true;
      }
      e.args.forEach((x) => merge(depsOf(x, bound)));
      return d;
    }
    case 'path': {
      if (e.root === 'none') {
        const first = e.steps[0];
        if (!first || first.k === 'axis') d.focus = true;
      }
      for (const s of e.steps) {
        if (s.k === 'filter') merge(depsOf(s.expr, bound));
        // Predicates have their own focus; only their variables and current() matter outside.
        for (const p of s.preds) d.local ||= depsOf(p, bound).local;
      }
      return d;
    }
    case 'for':
    case 'some':
    case 'every': {
      const inner = new Set(bound);
      for (const b of e.bindings) {
        merge(depsOf(b.in, inner));
        inner.add(qkey(b.name));
      }
      merge(depsOf(e.k === 'for' ? e.ret : e.sat, inner));
      return d;
    }
    case 'if':
      merge(depsOf(e.c, bound));
      merge(depsOf(e.t, bound));
      merge(depsOf(e.e, bound));
      return d;
    case 'neg':
    case 'plus':
    case 'instanceOf':
    case 'treatAs':
    case 'cast':
    case 'castable':
      return depsOf(e.e, bound);
    default:
      merge(depsOf(e.l, bound));
      merge(depsOf(e.r, bound));
      return d;
  }
}

/** Worth keeping per document: it reads the tree (a path) somewhere. */
function readsTree(e: Expr): boolean {
  switch (e.k) {
    case 'path':
      return true;
    case 'call':
      return e.args.some(readsTree);
    case 'seq':
      return e.items.some(readsTree);
    case 'if':
      return readsTree(e.c) || readsTree(e.t) || readsTree(e.e);
    case 'for':
    case 'some':
    case 'every':
      return e.bindings.some((b) => readsTree(b.in)) || readsTree(e.k === 'for' ? e.ret : e.sat);
    case 'neg':
    case 'plus':
    case 'instanceOf':
    case 'treatAs':
    case 'cast':
    case 'castable':
      return readsTree(e.e);
    case 'string':
    case 'integer':
    case 'decimal':
    case 'double':
    case 'var':
    case 'context':
      return false;
    default:
      return readsTree(e.l) || readsTree(e.r);
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Node helpers

export function sortNodes(nodes: XNode[]): XNode[] {
  if (nodes.length < 2) return nodes;
  nodes.sort((a, b) => a.order - b.order);
  let w = 1;
  for (let r = 1; r < nodes.length; r++) if (nodes[r] !== nodes[w - 1]) nodes[w++] = nodes[r]!;
  nodes.length = w;
  return nodes;
}

function nodesOf(seq: Sequence, what: string): XNode[] {
  for (const it of seq) {
    if (!isNode(it)) throw new XPathError('XPTY0019', `${what}: the left side of '/' is not a sequence of nodes`);
  }
  return seq as XNode[];
}

type Test = (n: XNode) => boolean;

function testOf(test: NodeTest, axis: Axis): Test {
  const principal = axis === 'attribute' ? ATTRIBUTE : ELEMENT;
  if (test.k === 'name') {
    const { ns, local } = test;
    if (ns === '*' && local === '*') return (n) => n.kind === principal;
    if (ns === '*') return (n) => n.kind === principal && n.local === local;
    if (local === '*') return (n) => n.kind === principal && n.ns === ns;
    return (n) => n.local === local && n.kind === principal && n.ns === ns;
  }
  switch (test.kind) {
    case 'node':
      return () => true;
    case 'text':
      return (n) => n.kind === TEXT;
    case 'comment':
      return (n) => n.kind === COMMENT;
    case 'document':
      if (test.name !== undefined) throw new Unsupported('document-node() with an element test');
      return (n) => n.kind === DOCUMENT;
    case 'pi': {
      const name = test.name;
      if (name === undefined || name === '*') return (n) => n.kind === PI;
      return (n) => n.kind === PI && n.local === name.local;
    }
    case 'element':
    case 'attribute': {
      const kind = test.kind === 'element' ? ELEMENT : ATTRIBUTE;
      const name = test.name;
      if (name === undefined || name === '*') return (n) => n.kind === kind;
      return (n) => n.kind === kind && n.local === name.local && n.ns === name.ns;
    }
  }
}

/** The nodes on an axis from `n`, in axis order (reverse axes nearest first), filtered by `t`. */
function axisNodes(axis: Axis, n: XNode, t: Test, out: XNode[]): void {
  switch (axis) {
    case 'child':
      for (const c of n.children) if (t(c)) out.push(c);
      return;
    case 'attribute':
      for (const a of n.attrs) if (t(a)) out.push(a);
      return;
    case 'self':
      if (t(n)) out.push(n);
      return;
    case 'parent':
      if (n.parent && t(n.parent)) out.push(n.parent);
      return;
    case 'descendant-or-self':
      if (t(n)) out.push(n);
      descendants(n, t, out);
      return;
    case 'descendant':
      descendants(n, t, out);
      return;
    case 'ancestor':
      for (let p = n.parent; p; p = p.parent) if (t(p)) out.push(p);
      return;
    case 'ancestor-or-self':
      for (let p: XNode | null = n; p; p = p.parent) if (t(p)) out.push(p);
      return;
    case 'following-sibling': {
      if (n.kind === ATTRIBUTE || !n.parent) return;
      const sib = n.parent.children;
      for (let k = n.index + 1; k < sib.length; k++) if (t(sib[k]!)) out.push(sib[k]!);
      return;
    }
    case 'preceding-sibling': {
      if (n.kind === ATTRIBUTE || !n.parent) return;
      const sib = n.parent.children;
      for (let k = n.index - 1; k >= 0; k--) if (t(sib[k]!)) out.push(sib[k]!);
      return;
    }
    case 'following': {
      // Everything after n in document order that is not a descendant (nor, for an attribute, its element's).
      let start: XNode = n.kind === ATTRIBUTE ? n.parent! : n;
      const all: XNode[] = [];
      if (n.kind === ATTRIBUTE) descendants(start, t, all);
      for (;;) {
        const p = start.parent;
        if (!p) break;
        for (let k = start.index + 1; k < p.children.length; k++) {
          const s = p.children[k]!;
          if (t(s)) all.push(s);
          descendants(s, t, all);
        }
        start = p;
      }
      for (const x of all) out.push(x);
      return;
    }
    case 'preceding': {
      const anchor = n.kind === ATTRIBUTE ? n.parent! : n;
      const ancestors = new Set<XNode>();
      for (let p = anchor.parent; p; p = p.parent) ancestors.add(p);
      const all: XNode[] = [];
      const walk = (x: XNode): void => {
        for (const c of x.children) {
          if (c.order >= anchor.order) return;
          if (!ancestors.has(c) && t(c)) all.push(c);
          walk(c);
        }
      };
      walk(n.root);
      for (let k = all.length - 1; k >= 0; k--) out.push(all[k]!);
      return;
    }
  }
}

function descendants(n: XNode, t: Test, out: XNode[]): void {
  for (const c of n.children) {
    if (t(c)) out.push(c);
    if (c.children.length > 0) descendants(c, t, out);
  }
}

/**
 * Per tree: its elements by expanded name (`{ns}local`) and its attributes (`@{ns}local`), in document order, built
 * on the first named descendant lookup.
 */
const elementIndex = new WeakMap<XNode, Map<string, XNode[]>>();

function elementsNamed(root: XNode, key: string): readonly XNode[] {
  let index = elementIndex.get(root);
  if (!index) {
    const idx = new Map<string, XNode[]>();
    const add = (k: string, x: XNode): void => {
      const list = idx.get(k);
      if (list) list.push(x);
      else idx.set(k, [x]);
    };
    const walk = (n: XNode): void => {
      for (const c of n.elements) {
        add(`{${c.ns}}${c.local}`, c);
        for (const a of c.attrs) add(`@{${a.ns}}${a.local}`, a);
        if (c.elements.length > 0) walk(c);
      }
    };
    walk(root);
    elementIndex.set(root, idx);
    index = idx;
  }
  return index.get(key) ?? NO_NODES;
}

const NO_NODES: readonly XNode[] = [];

/** First index in `list` (document order) whose order is greater than `order`. */
function firstAfter(list: readonly XNode[], order: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.order <= order) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** descendant(-or-self)::ns:local through the element index: the range of the subtree, no walk. */
function namedDescendants(n: XNode, key: string, orSelf: boolean, out: XNode[]): void {
  const list = elementsNamed(n.root, key);
  if (list.length === 0) return;
  let k = firstAfter(list, orSelf ? n.order - 1 : n.order);
  for (; k < list.length; k++) {
    const x = list[k]!;
    if (x.order > n.end) break;
    out.push(x);
  }
}

/**
 * child::ns:local, child::*, attribute::ns:local and attribute::* without a test closure per node: the element (or
 * attribute) list is scanned with the names compared inline. These are most steps of the rule packs.
 */
function directCollector(axis: Axis, test: NodeTest): ((n: XNode, t: Test, out: XNode[]) => void) | undefined {
  if (test.k !== 'name' || (axis !== 'child' && axis !== 'attribute')) return undefined;
  const { ns, local } = test;
  const listOf = axis === 'child' ? (n: XNode) => n.elements : (n: XNode) => n.attrs;
  if (ns === '*' && local === '*') {
    return (n, _t, out) => {
      for (const c of listOf(n)) out.push(c);
    };
  }
  if (ns === '*') {
    return (n, _t, out) => {
      const list = listOf(n);
      for (let i = 0; i < list.length; i++) if (list[i]!.local === local) out.push(list[i]!);
    };
  }
  if (local === '*') {
    return (n, _t, out) => {
      const list = listOf(n);
      for (let i = 0; i < list.length; i++) if (list[i]!.ns === ns) out.push(list[i]!);
    };
  }
  return (n, _t, out) => {
    const list = listOf(n);
    for (let i = 0; i < list.length; i++) {
      const c = list[i]!;
      if (c.local === local && c.ns === ns) out.push(c);
    }
  };
}

const REVERSE_AXES = new Set<Axis>(['parent', 'ancestor', 'ancestor-or-self', 'preceding-sibling', 'preceding']);

export function isNumeric(it: Item): boolean {
  return typeof it === 'number' || it instanceof Dec || it instanceof Flt;
}

export function numericValue(it: Item): number {
  if (typeof it === 'number') return it;
  if (it instanceof Flt) return it.n;
  const d = it as Dec;
  return d.scale === 0 ? Number(d.units) : Number(d.units) / 10 ** d.scale;
}

/** A predicate whose value is a numeric literal: plain positional selection. */
function literalPosition(p: Expr): number | undefined {
  if (p.k === 'integer') return Number(p.v);
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------------
// Compiler

export function compileExpr(e: Expr, scope: Scope): Evaluator {
  const inner = compileInner(e, scope);
  const k = e.k;
  if (k === 'string' || k === 'integer' || k === 'decimal' || k === 'double' || k === 'var' || k === 'context') {
    return inner;
  }
  const deps = depsOf(e, new Set());
  if (deps.focus || deps.local || !readsTree(e)) return inner;
  const slot = scope.unit.memoSlots++;
  return (ctx) => {
    const kept = ctx.run.memo[slot];
    if (kept !== undefined) return kept;
    const v = inner(ctx);
    ctx.run.memo[slot] = v;
    return v;
  };
}

function withFocus(ctx: Ctx, item: Item, pos: number, size: number): Ctx {
  return { item, pos, size, current: ctx.current, doc: ctx.doc, vars: ctx.vars, run: ctx.run };
}

function compileInner(e: Expr, scope: Scope): Evaluator {
  switch (e.k) {
    case 'string': {
      const v: Sequence = [e.v];
      return () => v;
    }
    case 'integer':
    case 'decimal': {
      const v: Sequence = castAs([e.v], { ns: 'http://www.w3.org/2001/XMLSchema', local: e.k }, false);
      return () => v;
    }
    case 'double': {
      const v: Sequence = [Number(e.v)];
      return () => v;
    }
    case 'var': {
      const slot = scope.lookup(e.name);
      if (slot !== undefined) return (ctx) => ctx.vars[slot]!;
      const g = scope.unit.globalSlots.get(qkey(e.name));
      if (g === undefined) throw new XPathError('XPST0008', `Variable $${e.name.local} is not declared`);
      return (ctx) => globalValue(ctx.run, g);
    }
    case 'context':
      return (ctx) => {
        if (ctx.item === undefined) throw new XPathError('XPDY0002', 'The context item is absent');
        return [ctx.item];
      };
    case 'seq': {
      const items = e.items.map((x) => compileExpr(x, scope));
      if (items.length === 0) return () => EMPTY;
      if (items.length === 1) return items[0]!;
      return (ctx) => {
        const out: Item[] = [];
        for (const f of items) for (const it of f(ctx)) out.push(it);
        return out;
      };
    }
    case 'call':
      return compileCall(e.fn, e.args, scope);
    case 'path':
      return compilePath(e.root, e.steps, scope);
    case 'or': {
      const l = compileExpr(e.l, scope);
      const r = compileExpr(e.r, scope);
      return (ctx) => (ebv(l(ctx)) || ebv(r(ctx)) ? TRUE : FALSE);
    }
    case 'and': {
      const l = compileExpr(e.l, scope);
      const r = compileExpr(e.r, scope);
      return (ctx) => (ebv(l(ctx)) && ebv(r(ctx)) ? TRUE : FALSE);
    }
    case 'gcmp': {
      const l = compileExpr(e.l, scope);
      const r = compileExpr(e.r, scope);
      const op = e.op;
      return (ctx) => (generalCompare(op, l(ctx), r(ctx)) ? TRUE : FALSE);
    }
    case 'vcmp': {
      const l = compileExpr(e.l, scope);
      const r = compileExpr(e.r, scope);
      const op = e.op;
      return (ctx) => valueCompare(op, l(ctx), r(ctx));
    }
    case 'ncmp': {
      const l = compileExpr(e.l, scope);
      const r = compileExpr(e.r, scope);
      const op = e.op;
      return (ctx) => {
        const a = l(ctx);
        const b = r(ctx);
        if (a.length === 0 || b.length === 0) return EMPTY;
        if (a.length > 1 || b.length > 1 || !isNode(a[0]!) || !isNode(b[0]!)) {
          throw new XPathError('XPTY0004', `Operands of '${op}' must be single nodes`);
        }
        const x = a[0];
        const y = b[0];
        return (op === 'is' ? x === y : op === '<<' ? x.order < y.order : x.order > y.order) ? TRUE : FALSE;
      };
    }
    case 'arith': {
      const l = compileExpr(e.l, scope);
      const r = compileExpr(e.r, scope);
      const op = e.op;
      return (ctx) => arithmetic(op, l(ctx), r(ctx));
    }
    case 'neg': {
      const x = compileExpr(e.e, scope);
      return (ctx) => unaryMinus(x(ctx));
    }
    case 'plus': {
      const x = compileExpr(e.e, scope);
      return (ctx) => unaryPlus(x(ctx));
    }
    case 'range': {
      const l = compileExpr(e.l, scope);
      const r = compileExpr(e.r, scope);
      return (ctx) => rangeTo(l(ctx), r(ctx));
    }
    case 'union':
    case 'intersect':
    case 'except': {
      const l = compileExpr(e.l, scope);
      const r = compileExpr(e.r, scope);
      const k = e.k;
      return (ctx) => {
        const a = nodesOf(l(ctx), k);
        const b = nodesOf(r(ctx), k);
        if (k === 'union') return sortNodes([...a, ...b]);
        const inB = new Set(b);
        return sortNodes(a.filter((n) => (k === 'intersect' ? inB.has(n) : !inB.has(n))));
      };
    }
    case 'for':
    case 'some':
    case 'every':
      return compileBinding(e, scope);
    case 'if': {
      const c = compileExpr(e.c, scope);
      const t = compileExpr(e.t, scope);
      const f = compileExpr(e.e, scope);
      return (ctx) => (ebv(c(ctx)) ? t(ctx) : f(ctx));
    }
    case 'instanceOf': {
      const x = compileExpr(e.e, scope);
      const type = e.type;
      return (ctx) => (instanceOf(x(ctx), type) ? TRUE : FALSE);
    }
    case 'treatAs': {
      const x = compileExpr(e.e, scope);
      const type = e.type;
      return (ctx) => {
        const v = x(ctx);
        if (!instanceOf(v, type)) throw new XPathError('XPDY0050', 'treat as: the value does not match the type');
        return v;
      };
    }
    case 'cast': {
      const x = compileExpr(e.e, scope);
      const { type, optional } = e;
      return (ctx) => castAs(x(ctx), type, optional);
    }
    case 'castable': {
      const x = compileExpr(e.e, scope);
      const { type, optional } = e;
      return (ctx) => (castableAs(x(ctx), type, optional) ? TRUE : FALSE);
    }
  }
}

function globalValue(run: RunState, slot: number): Sequence {
  const kept = run.globals[slot];
  if (kept !== undefined) return kept;
  const ctx: Ctx = { item: run.doc, pos: 1, size: 1, current: run.doc, doc: run.doc, vars: [], run };
  const v = run.globalEvaluators[slot]!(ctx);
  run.globals[slot] = v;
  return v;
}

function compileBinding(e: Extract<Expr, { k: 'for' | 'some' | 'every' }>, outer: Scope): Evaluator {
  const scope = outer.child();
  const ins: Evaluator[] = [];
  const slots: number[] = [];
  for (const b of e.bindings) {
    ins.push(compileExpr(b.in, scope));
    slots.push(scope.bind(b.name));
  }
  const body = compileExpr(e.k === 'for' ? e.ret : e.sat, scope);
  const n = ins.length;
  if (e.k === 'for') {
    return (ctx) => {
      const out: Item[] = [];
      const loop = (k: number): void => {
        const seq = ins[k]!(ctx);
        for (const it of seq) {
          ctx.vars[slots[k]!] = [it];
          if (k + 1 < n) loop(k + 1);
          else for (const r of body(ctx)) out.push(r);
        }
      };
      loop(0);
      return out;
    };
  }
  const want = e.k === 'some';
  return (ctx) => {
    // True as soon as one combination of the bindings decides: a body that is true (some) or false (every).
    const loop = (k: number): boolean => {
      const seq = ins[k]!(ctx);
      for (const it of seq) {
        ctx.vars[slots[k]!] = [it];
        if (k + 1 < n ? loop(k + 1) : ebv(body(ctx)) === want) return true;
      }
      return false;
    };
    return loop(0) === want ? TRUE : FALSE;
  };
}

function compileCall(fn: QName, argExprs: readonly Expr[], scope: Scope): Evaluator {
  const args = argExprs.map((a) => compileExpr(a, scope));
  const key = functionKey(fn, args.length);
  const own = scope.unit.functions.get(key);
  if (own) {
    return (ctx) =>
      own.impl(
        ctx.run,
        args.map((a) => a(ctx)),
      );
  }
  if (fn.ns === FN_NS && fn.local === 'key') return compileKeyCall(argExprs, args, scope);
  if (fn.ns === FN_NS && fn.local === 'document') return compileDocumentCall(argExprs, scope.unit);
  if (fn.ns === FN_NS && fn.local === 'current' && args.length === 0) {
    return (ctx) => (ctx.current === undefined ? EMPTY : [ctx.current]);
  }
  const impl: FunctionImpl | undefined = lookupBuiltin(fn, args.length);
  if (!impl) throw new Unsupported(`function ${fn.ns === FN_NS ? '' : `{${fn.ns}}`}${fn.local}#${args.length}`);
  if (args.length === 0) return (ctx) => impl(ctx, EMPTY_ARGS);
  if (args.length === 1) {
    const a0 = args[0]!;
    return (ctx) => impl(ctx, [a0(ctx)]);
  }
  if (args.length === 2) {
    const a0 = args[0]!;
    const a1 = args[1]!;
    return (ctx) => impl(ctx, [a0(ctx), a1(ctx)]);
  }
  return (ctx) =>
    impl(
      ctx,
      args.map((a) => a(ctx)),
    );
}

const EMPTY_ARGS: readonly Sequence[] = [];

type StepFn = (input: readonly XNode[] | Sequence, ctx: Ctx, flat: boolean) => Sequence;

const BOOLEAN_FUNCTIONS = new Set([
  'not',
  'exists',
  'empty',
  'boolean',
  'true',
  'false',
  'contains',
  'starts-with',
  'ends-with',
  'matches',
]);

/** descendant-or-self::node() without predicates: what `//` stands for. */
export function isDescendantOrSelfNode(s: Step): boolean {
  return (
    s.k === 'axis' &&
    s.axis === 'descendant-or-self' &&
    s.test.k === 'kind' &&
    s.test.kind === 'node' &&
    s.preds.length === 0
  );
}

/** `a | b | …` where each branch is one child::name step whose predicates cannot see positions; else undefined. */
function unionOfChildSteps(e: Expr): Array<Extract<Step, { k: 'axis' }>> | undefined {
  if (e.k === 'union') {
    const l = unionOfChildSteps(e.l);
    const r = unionOfChildSteps(e.r);
    return l && r ? [...l, ...r] : undefined;
  }
  if (e.k !== 'path' || e.root !== 'none' || e.steps.length !== 1) return undefined;
  const only = e.steps[0]!;
  if (only.k !== 'axis' || only.axis !== 'child' || only.test.k !== 'name') return undefined;
  return only.preds.every(isBooleanPredicate) ? [only] : undefined;
}

/** A path ending in an axis step (or a union of such): its value is nodes, never a number. */
function yieldsNodesOnly(p: Expr): boolean {
  if (p.k === 'union') return yieldsNodesOnly(p.l) && yieldsNodesOnly(p.r);
  if (p.k !== 'path') return false;
  const last = p.steps[p.steps.length - 1];
  return last === undefined || last.k === 'axis';
}

/**
 * A predicate that always yields a boolean and never reads position() or last(): its value does not depend on which
 * axis the node was reached by, so `//T[p]` may be evaluated as descendant::T[p].
 */
function isBooleanPredicate(p: Expr): boolean {
  const boolean =
    p.k === 'gcmp' ||
    p.k === 'vcmp' ||
    p.k === 'ncmp' ||
    p.k === 'and' ||
    p.k === 'or' ||
    p.k === 'some' ||
    p.k === 'every' ||
    p.k === 'instanceOf' ||
    p.k === 'castable' ||
    (p.k === 'call' && p.fn.ns === FN_NS && BOOLEAN_FUNCTIONS.has(p.fn.local));
  if (!boolean && !yieldsNodesOnly(p)) return false;
  const text = JSON.stringify(p);
  return !text.includes(`"local":"position"`) && !text.includes(`"local":"last"`);
}

/**
 * `//T` is descendant-or-self::node()/child::T; when T's predicates cannot see positions it is descendant::T, found
 * through the element index instead of a walk.
 */
function fuseDescendantSteps(steps: readonly Step[]): Step[] {
  const out: Step[] = [];
  for (let k = 0; k < steps.length; k++) {
    const s = steps[k]!;
    const next = steps[k + 1];
    if (
      s.k === 'axis' &&
      s.axis === 'descendant-or-self' &&
      s.test.k === 'kind' &&
      s.test.kind === 'node' &&
      s.preds.length === 0 &&
      next?.k === 'axis' &&
      next.axis === 'child' &&
      next.preds.every(isBooleanPredicate)
    ) {
      out.push({ k: 'axis', axis: 'descendant', test: next.test, preds: next.preds });
      k++;
    } else if (
      isDescendantOrSelfNode(s) &&
      next?.k === 'filter' &&
      next.preds.length === 0 &&
      unionOfChildSteps(next.expr)
    ) {
      // //(a | b): the union of //a and //b, each through the element index.
      const branches = unionOfChildSteps(next.expr)!;
      const expr = branches
        .map((b): Expr => ({
          k: 'path',
          root: 'none',
          steps: [{ k: 'axis', axis: 'descendant', test: b.test, preds: b.preds }],
        }))
        .reduce((l, r) => ({ k: 'union', l, r }));
      out.push({ k: 'filter', expr, preds: [] });
      k++;
    } else if (
      s.k === 'axis' &&
      s.axis === 'descendant-or-self' &&
      s.test.k === 'kind' &&
      s.test.kind === 'node' &&
      s.preds.length === 0 &&
      next?.k === 'axis' &&
      next.axis === 'attribute' &&
      next.test.k === 'name' &&
      next.test.ns !== '*' &&
      next.test.local !== '*' &&
      next.preds.every(isBooleanPredicate)
    ) {
      // //@a: the attributes named a in the subtree, through the index (marked by the attribute test on this axis).
      out.push({
        k: 'axis',
        axis: 'descendant',
        test: { k: 'name', ns: `@${next.test.ns}`, local: next.test.local },
        preds: next.preds,
      });
      k++;
    } else out.push(s);
  }
  return out;
}

function compilePath(root: 'none' | 'root' | 'rootDescendant', given: readonly Step[], scope: Scope): Evaluator {
  const steps = fuseDescendantSteps(given);
  const compiled = steps.map((s) => compileStep(s, scope));
  const first = steps[0];
  // A relative path starting with a filter expression evaluates it in the outer context.
  const startsWithFilter = root === 'none' && first?.k === 'filter';
  return (ctx) => {
    let current: Sequence;
    let flat = true;
    let k = 0;
    if (root !== 'none') {
      if (ctx.item === undefined) throw new XPathError('XPDY0002', 'The context item is absent');
      if (!isNode(ctx.item))
        throw new XPathError('XPTY0020', 'The context item for a path from the root is not a node');
      const top = ctx.item.root;
      if (top.kind !== DOCUMENT) throw new XPathError('XPDY0050', 'The root of the context node is not a document');
      current = [top];
    } else if (startsWithFilter) {
      current = compiled[0]!(EMPTY, ctx, true);
      k = 1;
      flat = false;
    } else {
      if (ctx.item === undefined) throw new XPathError('XPDY0002', 'The context item is absent');
      if (!isNode(ctx.item)) throw new XPathError('XPTY0020', 'The context item for an axis step is not a node');
      current = [ctx.item];
    }
    for (; k < compiled.length; k++) {
      nodesOf(current, 'path');
      current = compiled[k]!(current, ctx, flat);
      const s = steps[k]!;
      flat = flat && s.k === 'axis' && (s.axis === 'child' || s.axis === 'attribute' || s.axis === 'self');
    }
    return current;
  };
}

function compileStep(step: Step, scope: Scope): StepFn {
  const preds = step.preds.map((p) => ({ f: compileExpr(p, scope), lit: literalPosition(p) }));
  const applyPreds = (items: Item[], ctx: Ctx): Item[] => {
    let cur = items;
    for (const p of preds) {
      if (p.lit !== undefined) {
        const it = cur[p.lit - 1];
        cur = it === undefined ? [] : [it];
        continue;
      }
      const next: Item[] = [];
      const size = cur.length;
      // One focus object per predicate, moved along the items (evaluators never keep their context).
      const focus = withFocus(ctx, cur[0]!, 1, size) as { -readonly [K in keyof Ctx]: Ctx[K] };
      for (let i = 0; i < size; i++) {
        const it = cur[i]!;
        focus.item = it;
        focus.pos = i + 1;
        const v = p.f(focus);
        if (v.length === 1 && isNumeric(v[0]!)) {
          if (numericValue(v[0]!) === i + 1) next.push(it);
        } else if (ebv(v)) next.push(it);
      }
      cur = next;
    }
    return cur;
  };

  if (step.k === 'filter') {
    const base = compileExpr(step.expr, scope);
    return (input, ctx) => {
      if (input === EMPTY) {
        const v = base(ctx);
        return preds.length === 0 ? v : applyPreds(v.slice(), ctx);
      }
      // A filter step after '/': evaluated once per context node; nodes are sorted, atomics kept in order.
      const out: Item[] = [];
      const size = input.length;
      let allNodes = true;
      const focus = withFocus(ctx, input[0]!, 1, size) as { -readonly [K in keyof Ctx]: Ctx[K] };
      for (let i = 0; i < size; i++) {
        focus.item = input[i]!;
        focus.pos = i + 1;
        const v = base(focus);
        const kept = preds.length === 0 ? v : applyPreds(v.slice(), ctx);
        for (const it of kept) {
          if (!isNode(it)) allNodes = false;
          out.push(it);
        }
      }
      if (allNodes) return sortNodes(out as XNode[]);
      if (out.some(isNode)) throw new XPathError('XPTY0018', 'A path step returned both nodes and atomic values');
      return out;
    };
  }

  const axis = step.axis;
  const t = testOf(step.test, axis);
  const reverse = REVERSE_AXES.has(axis);
  const simple = preds.length === 0;
  const test = step.test;
  // A fused //@a step carries '@' before the namespace (fuseDescendantSteps): its index key is @{ns}local.
  const named =
    (axis === 'descendant' || axis === 'descendant-or-self') &&
    test.k === 'name' &&
    test.ns !== '*' &&
    test.local !== '*'
      ? test.ns.startsWith('@')
        ? `@{${test.ns.slice(1)}}${test.local}`
        : `{${test.ns}}${test.local}`
      : undefined;
  const orSelf = axis === 'descendant-or-self';
  const collect = named
    ? (n: XNode, _t: Test, out: XNode[]): void => namedDescendants(n, named, orSelf, out)
    : (directCollector(axis, test) ?? ((n: XNode, tt: Test, out: XNode[]): void => axisNodes(axis, n, tt, out)));
  return (input, ctx, flat) => {
    const nodes = input as readonly XNode[];
    if (nodes.length === 1) {
      const out: XNode[] = [];
      collect(nodes[0]!, t, out);
      if (simple) return reverse ? out.reverse() : out;
      const kept = applyPreds(out, ctx) as XNode[];
      return reverse ? kept.reverse() : kept;
    }
    let out: XNode[] = [];
    for (const n of nodes) {
      if (simple) collect(n, t, out);
      else {
        const one: XNode[] = [];
        collect(n, t, one);
        for (const x of applyPreds(one, ctx) as XNode[]) out.push(x);
      }
    }
    if (!(flat && (axis === 'child' || axis === 'attribute' || axis === 'self'))) out = sortNodes(out);
    return out;
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Stylesheet functions and variables

export interface VariableDecl {
  name: QName;
  as?: SequenceType;
  select?: Expr;
  body?: readonly import('./program').Instr[];
  /** An xsl:param (evaluated like a variable here: stylesheet parameters are never supplied). */
  param?: true;
}

/** Compiles a variable's value (select, or a sequence constructor) to an evaluator. */
export function compileVariable(v: VariableDecl, scope: Scope): Evaluator {
  let f: Evaluator;
  if (v.select) f = compileExpr(v.select, scope);
  else if (v.body && v.body.length > 0) {
    const body = compileInstrs(v.body, scope);
    // Without `as`, a sequence constructor builds a temporary document (its text); with `as`, the items themselves.
    f = v.as ? body : (ctx) => [temporaryDocument(body(ctx))];
  } else {
    // No select and no content: a zero-length string, or the empty sequence when `as` is given (XSLT 2.0, 9.3).
    const value: Sequence = v.as ? EMPTY : [''];
    f = () => value;
  }
  if (!v.as) return f;
  const type = v.as;
  const what = `variable $${v.name.local}`;
  return (ctx) => convertTo(f(ctx), type, what);
}

function temporaryDocument(items: Sequence): XNode {
  let text = '';
  for (const it of items) {
    if (isNode(it)) throw new Unsupported('a temporary tree with nodes in a variable');
    text += stringOf(it);
  }
  // A document node with one text child, as XSLT builds for <xsl:variable>text</xsl:variable>.
  const doc: { -readonly [K in keyof XNode]: XNode[K] } = {
    kind: DOCUMENT,
    ns: '',
    local: '',
    name: '',
    parent: null,
    children: [],
    elements: [],
    attrs: [],
    order: 0,
    end: 0,
    key: '',
    value: '',
    index: 0,
    root: undefined as unknown as XNode,
  };
  doc.root = doc;
  if (text !== '') {
    const t: XNode = { ...doc, kind: TEXT, parent: doc, children: [], value: text, order: 1, end: 1, root: doc };
    doc.children = [t];
    doc.end = 1;
  }
  return doc;
}

export function compileInstrs(instrs: readonly import('./program').Instr[], scope: Scope): Evaluator {
  const parts: Array<(ctx: Ctx, out: Item[]) => void> = [];
  const s = scope.child();
  for (const ins of instrs) {
    switch (ins.k) {
      case 'variable': {
        const f = compileVariable(ins, s);
        const slot = s.bind(ins.name);
        parts.push((ctx) => {
          ctx.vars[slot] = f(ctx);
        });
        break;
      }
      case 'sequence': {
        const f = compileExpr(ins.select, s);
        parts.push((ctx, out) => {
          for (const it of f(ctx)) out.push(it);
        });
        break;
      }
      case 'text': {
        const v = ins.v;
        parts.push((_ctx, out) => void out.push(v));
        break;
      }
      case 'valueOf': {
        const f = compileExpr(ins.select, s);
        const sep = ins.separator ?? ' ';
        parts.push((ctx, out) => void out.push(valueOfText(f(ctx), sep)));
        break;
      }
      case 'choose': {
        const whens = ins.whens.map((w) => ({ test: compileExpr(w.test, s), body: compileInstrs(w.body, s) }));
        const otherwise = ins.otherwise ? compileInstrs(ins.otherwise, s) : undefined;
        parts.push((ctx, out) => {
          for (const w of whens) {
            if (ebv(w.test(ctx))) {
              for (const it of w.body(ctx)) out.push(it);
              return;
            }
          }
          if (otherwise) for (const it of otherwise(ctx)) out.push(it);
        });
        break;
      }
      case 'if': {
        const test = compileExpr(ins.test, s);
        const body = compileInstrs(ins.body, s);
        parts.push((ctx, out) => {
          if (ebv(test(ctx))) for (const it of body(ctx)) out.push(it);
        });
        break;
      }
    }
  }
  return (ctx) => {
    const out: Item[] = [];
    for (const p of parts) p(ctx, out);
    return out;
  };
}

/** xsl:value-of: the string values of the items joined by the separator. */
export function valueOfText(seq: Sequence, sep: string): string {
  if (seq.length === 1) return stringOf(seq[0]!);
  return seq.map(stringOf).join(sep);
}

/** Declares a stylesheet function (so calls can resolve) and returns the step that compiles its body. */
export function declareFunction(
  unit: CompileUnit,
  name: QName,
  params: ReadonlyArray<{ name: QName; as?: SequenceType }>,
  as: SequenceType | undefined,
  body: readonly import('./program').Instr[],
): () => void {
  const holder: CompiledFunction = {
    name,
    arity: params.length,
    frameSize: 0,
    impl: () => {
      throw new Error(`function ${name.local} called before it was compiled`);
    },
  };
  unit.functions.set(functionKey(name, params.length), holder);
  return () => {
    const scope = new Scope(unit);
    const slots = params.map((p) => scope.bind(p.name));
    const run = compileInstrs(body, scope);
    const what = `function ${name.local}`;
    holder.impl = (state, args) => {
      const vars: Sequence[] = new Array<Sequence>(scope.frameSize);
      for (let k = 0; k < slots.length; k++) {
        const p = params[k]!;
        vars[slots[k]!] = p.as ? convertTo(args[k]!, p.as, `${what} parameter $${p.name.local}`, 'XPTY0004') : args[k]!;
      }
      // A function body has no focus (XPDY0002 if it uses one).
      const ctx: Ctx = { item: undefined, pos: 0, size: 0, current: undefined, doc: state.doc, vars, run: state };
      const v = run(ctx);
      return as ? convertTo(v, as, `result of ${what}`, 'XTTE0780') : v;
    };
  };
}
