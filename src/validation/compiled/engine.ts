import {
  compileExpr,
  compileVariable,
  CompileUnit,
  declareFunction,
  isDescendantOrSelfNode,
  isNumeric,
  numericValue,
  Scope,
  valueOfText,
  type Ctx,
  type Evaluator,
  type RunState,
} from './evaluate';
import {
  ATTRIBUTE,
  DOCUMENT,
  ELEMENT,
  TEXT,
  FN_NS,
  Unsupported,
  XPathError,
  isNode,
  type Expr,
  type NodeTest,
  type Sequence,
  type XNode,
} from './model';
import type { Check, Pattern, Rule, SchematronProgram } from './program';
import { ebv } from './runtime';

/**
 * Runs a Schematron program (program.ts, read from the official skeleton XSLT) the way the XSLT does: for each pattern
 * in order, a walk of the document in its mode where every node gets the highest-priority rule whose match pattern it
 * matches (else the mode's default), fired rules evaluate their variables and checks in order, and each failed assert
 * or successful report yields what the SVRL would hold: id, flag, location (the skeleton's full-path form) and text.
 */

export interface RawAssertion {
  kind: 'failed-assert' | 'successful-report';
  id: string;
  flag: string;
  location: string;
  text: string;
}

type NodeMatcher = (n: XNode, run: RunState) => boolean;

interface CompiledCheck {
  kind: 'failed-assert' | 'successful-report';
  test: Evaluator;
  id: string;
  testText: string;
  flag: string;
  location: (ctx: Ctx) => string;
  text: Array<string | Evaluator>;
}

interface CompiledRule {
  priority: number;
  order: number;
  /** The rule's scope: its frame size is known once every expression in it is compiled. */
  scope: Scope;
  context: string;
  variables: Array<{ slot: number; value: Evaluator }>;
  checks: CompiledCheck[];
  apply: Applier;
}

interface Candidate {
  rule: CompiledRule;
  matches: NodeMatcher;
}

/** Selects the nodes templates are applied to next. */
type Applier = (n: XNode, ctx: Ctx) => readonly XNode[];

interface CompiledPattern {
  /** Candidates by node key (`E{ns}local` / `A{ns}local`), generic candidates merged in, by priority. */
  byKey: Map<string, Candidate[]>;
  generic: Candidate[];
  defaultApply: Applier | undefined;
}

export interface CompiledProgram {
  unit: CompileUnit;
  globals: Evaluator[];
  patterns: CompiledPattern[];
}

// ---------------------------------------------------------------------------------------------------------------------
// Compilation

export function compileProgram(program: SchematronProgram, options: { baseUri?: string } = {}): CompiledProgram {
  if (program.locationStyle !== 'namespaced') {
    throw new Unsupported(`locations in the skeleton's ${program.locationStyle} style`);
  }
  const unit = new CompileUnit(options.baseUri);
  for (const g of program.globals) unit.globalSlots.set(`{${g.name.ns}}${g.name.local}`, unit.globalSlots.size);
  const bodies = program.functions.map((f) => declareFunction(unit, f.name, f.params, f.as, f.body));
  // Keys before any body that may call key(); their `use` may call the functions declared above.
  for (const k of program.keys) {
    const scope = new Scope(unit);
    const alts = alternatives(k.match).map((alt) => matcherOf(alt, unit));
    const use = compileExpr(k.use, scope);
    unit.keys.set(`{${k.name.ns}}${k.name.local}`, {
      slot: unit.keys.size,
      matches: (n, run) => alts.some((m) => m(n, run)),
      use,
      frameSize: scope.frameSize,
    });
  }
  for (const compileBody of bodies) compileBody();
  const globals = program.globals.map((g) => compileVariable(g, new Scope(unit)));
  unit.globalEvaluators.push(...globals);
  const patterns = program.patterns.map((p) => compilePattern(p, unit));
  return { unit, globals, patterns };
}

function compilePattern(p: Pattern, unit: CompileUnit): CompiledPattern {
  const generic: Candidate[] = [];
  const keyed = new Map<string, Candidate[]>();
  p.rules.forEach((r, order) => {
    const rule = compileRule(r, order, unit);
    for (const alt of alternatives(r.match)) {
      const cand: Candidate = { rule, matches: matcherOf(alt, unit) };
      const key = keyOfPattern(alt.path);
      if (key === undefined) generic.push(cand);
      else {
        const list = keyed.get(key) ?? [];
        list.push(cand);
        keyed.set(key, list);
      }
    }
  });
  // The reader lists rules in the order a processor prefers them (priority, then the later of equals first).
  const byPriority = (a: Candidate, b: Candidate): number =>
    b.rule.priority - a.rule.priority || a.rule.order - b.rule.order;
  generic.sort(byPriority);
  const byKey = new Map<string, Candidate[]>();
  for (const [key, list] of keyed) byKey.set(key, [...list, ...generic].sort(byPriority));
  return { byKey, generic, defaultApply: p.defaultApply ? compileApplier(p.defaultApply, unit) : undefined };
}

/** One path alternative of a match pattern, with the predicates of an enclosing `(…)[…]` (XSLT 3.0 form). */
interface Alternative {
  path: Extract<Expr, { k: 'path' }>;
  /** Predicates applied to the matched node alone (position 1 of 1). */
  outer: readonly Expr[];
}

/** The test of one alternative of a match pattern on a node, its enclosing predicates included. */
function matcherOf(alt: Alternative, unit: CompileUnit): NodeMatcher {
  return withOuterPredicates(compileMatch(alt.path, unit), alt.outer, unit);
}

function alternatives(e: Expr, outer: readonly Expr[] = []): Alternative[] {
  if (e.k === 'union') return [...alternatives(e.l, outer), ...alternatives(e.r, outer)];
  if (e.k === 'path') {
    const only = e.steps[0];
    if (e.root === 'none' && e.steps.length === 1 && only?.k === 'filter') {
      return alternatives(only.expr, [...outer, ...only.preds]);
    }
    if (e.root === 'none' && only?.k === 'filter') {
      // (P1 | P2)/rest is P1/rest | P2/rest.
      if (only.preds.length > 0) throw new Unsupported('a parenthesised match pattern with predicates and more steps');
      const rest = e.steps.slice(1);
      return alternatives(only.expr, outer).map((a) => {
        if (a.outer.length > outer.length) throw new Unsupported('nested parenthesised match patterns with predicates');
        return { path: { ...a.path, steps: [...a.path.steps, ...rest] }, outer };
      });
    }
    return [{ path: e, outer }];
  }
  throw new Unsupported(`a match pattern of kind ${e.k}`);
}

function keyOfPattern(p: Extract<Expr, { k: 'path' }>): string | undefined {
  const last = p.steps[p.steps.length - 1];
  if (!last || last.k !== 'axis' || last.test.k !== 'name') return undefined;
  if (last.test.ns === '*' || last.test.local === '*') return undefined;
  return `${last.axis === 'attribute' ? 'A' : 'E'}{${last.test.ns}}${last.test.local}`;
}

function nodeTestOf(test: NodeTest, axis: 'child' | 'attribute'): (n: XNode) => boolean {
  const onAxis =
    axis === 'attribute'
      ? (n: XNode) => n.kind === ATTRIBUTE
      : (n: XNode) => n.kind !== ATTRIBUTE && n.kind !== DOCUMENT;
  if (test.k === 'name') {
    const principal = axis === 'attribute' ? ATTRIBUTE : ELEMENT;
    const { ns, local } = test;
    return (n) => n.kind === principal && (ns === '*' || n.ns === ns) && (local === '*' || n.local === local);
  }
  const name = test.name;
  const named = (n: XNode): boolean =>
    name === undefined || name === '*' || (n.local === name.local && n.ns === name.ns);
  switch (test.kind) {
    case 'node':
      return onAxis;
    case 'text':
      return (n) => n.kind === TEXT;
    case 'comment':
      return (n) => n.kind === 8;
    case 'pi':
      return (n) => n.kind === 7 && (name === undefined || name === '*' || n.local === name.local);
    case 'element':
      return (n) => n.kind === ELEMENT && onAxis(n) && named(n);
    case 'attribute':
      return (n) => n.kind === ATTRIBUTE && onAxis(n) && named(n);
    case 'document':
      return () => false;
  }
}

function usesFocusPosition(e: Expr): boolean {
  return (
    JSON.stringify(e).includes(`"ns":"${FN_NS}","local":"position"`) ||
    JSON.stringify(e).includes(`"ns":"${FN_NS}","local":"last"`)
  );
}

/** An XSLT path pattern as a test on one node, matched from its last step back towards the root. */
function compileMatch(p: Extract<Expr, { k: 'path' }>, unit: CompileUnit): NodeMatcher {
  const root = p.root;
  if (p.steps.length === 0) return (n) => n.kind === DOCUMENT;
  const steps = p.steps.map((s) => {
    if (isDescendantOrSelfNode(s)) return { marker: true as const };
    if (s.k !== 'axis' || (s.axis !== 'child' && s.axis !== 'attribute')) {
      throw new Unsupported('a match pattern step that is not on the child or attribute axis');
    }
    const test = nodeTestOf(s.test, s.axis);
    const axis = s.axis;
    const preds = s.preds.map((e, k) => {
      if (k > 0 && (e.k === 'integer' || usesFocusPosition(e))) {
        throw new Unsupported('a positional predicate after the first in a match pattern');
      }
      return {
        f: compileExpr(e, new Scope(unit)),
        lit: e.k === 'integer' ? Number(e.v) : undefined,
        first: k === 0,
        // Position and size among the siblings cost a scan of them: only for predicates that read them.
        focus: usesFocusPosition(e),
      };
    });
    return { marker: false as const, test, axis, preds };
  });

  const positionOf = (n: XNode, step: { test: (x: XNode) => boolean; axis: string }): [number, number] => {
    const siblings = step.axis === 'attribute' ? n.parent!.attrs : n.parent!.children;
    let pos = 0;
    let size = 0;
    for (const s of siblings) {
      if (!step.test(s)) continue;
      size++;
      if (s === n) pos = size;
    }
    return [pos, size];
  };

  const matchStep = (n: XNode, k: number, run: RunState): boolean => {
    const step = steps[k]!;
    if (step.marker || !step.test(n)) return false;
    for (const pr of step.preds) {
      if (pr.lit !== undefined) {
        if (!n.parent || positionOf(n, step)[0] !== pr.lit) return false;
        continue;
      }
      const [pos, size] = pr.focus && n.parent ? positionOf(n, step) : [1, 1];
      const ctx: Ctx = { item: n, pos, size, current: n, doc: run.doc, vars: [], run };
      const v = patternPredicate(pr.f, ctx);
      if (v === undefined) return false;
      if (v.length === 1 && isNumeric(v[0]!)) {
        if (!pr.first) throw new Unsupported('a numeric predicate after the first in a match pattern');
        if (numericValue(v[0]!) !== (n.parent ? positionOf(n, step)[0] : 1)) return false;
      } else if (!patternEbv(v)) return false;
    }
    return true;
  };

  // Does steps[0..k] match with steps[k] at n?
  const matchFrom = (n: XNode, k: number, run: RunState): boolean => {
    if (!matchStep(n, k, run)) return false;
    return matchPrefix(n.parent, k - 1, run);
  };
  const matchPrefix = (p: XNode | null, j: number, run: RunState): boolean => {
    if (p === null) return false;
    if (j < 0) return root === 'none' ? true : p.kind === DOCUMENT;
    if (steps[j]!.marker) {
      if (j === 0) return p.root.kind === DOCUMENT;
      for (let a: XNode | null = p; a; a = a.parent) if (matchFrom(a, j - 1, run)) return true;
      return false;
    }
    return matchFrom(p, j, run);
  };
  const last = steps.length - 1;
  return (n, run) => matchFrom(n, last, run);
}

function withOuterPredicates(m: NodeMatcher, outer: readonly Expr[], unit: CompileUnit): NodeMatcher {
  if (outer.length === 0) return m;
  const preds = outer.map((e) => compileExpr(e, new Scope(unit)));
  return (n, run) => {
    if (!m(n, run)) return false;
    const ctx: Ctx = { item: n, pos: 1, size: 1, current: n, doc: run.doc, vars: [], run };
    for (const f of preds) {
      const v = patternPredicate(f, ctx);
      if (v === undefined) return false;
      if (v.length === 1 && isNumeric(v[0]!) ? numericValue(v[0]!) !== 1 : !patternEbv(v)) return false;
    }
    return true;
  };
}

/**
 * A predicate of a match pattern. A dynamic error there does not stop the transformation: XSLT 2.0 (6.4) lets the
 * processor treat the pattern as not matching the node, and Saxon does; so do we (undefined = no match).
 */
function patternPredicate(f: Evaluator, ctx: Ctx): Sequence | undefined {
  try {
    return f(ctx);
  } catch (e) {
    if (e instanceof XPathError) return undefined;
    throw e;
  }
}

/** The effective boolean value of a pattern predicate; an error there is a non-match too. */
function patternEbv(v: Sequence): boolean {
  try {
    return ebv(v);
  } catch (e) {
    if (e instanceof XPathError) return false;
    throw e;
  }
}

const ATTRS_AND_ELEMENTS: Applier = (n) => (n.attrs.length === 0 ? n.elements : [...n.attrs, ...n.elements]);
const ELEMENTS: Applier = (n) => n.elements;

function compileApplier(select: Expr, unit: CompileUnit): Applier {
  const shape = JSON.stringify(select);
  if (shape === JSON.stringify(ATTRS_AND_ELEMENTS_EXPR)) return ATTRS_AND_ELEMENTS;
  if (shape === JSON.stringify(ELEMENTS_EXPR)) return ELEMENTS;
  const f = compileExpr(select, new Scope(unit));
  return (n, ctx) => {
    const v = f(ctx);
    for (const it of v) if (!isNode(it)) throw new Unsupported('apply-templates over atomic values');
    return v as XNode[];
  };
}

const ANY_NAME = { k: 'name', ns: '*', local: '*' } as const;
const ELEMENTS_EXPR: Expr = {
  k: 'path',
  root: 'none',
  steps: [{ k: 'axis', axis: 'child', test: ANY_NAME, preds: [] }],
};
const ATTRS_AND_ELEMENTS_EXPR: Expr = {
  k: 'union',
  l: { k: 'path', root: 'none', steps: [{ k: 'axis', axis: 'attribute', test: ANY_NAME, preds: [] }] },
  r: ELEMENTS_EXPR,
};

function compileRule(r: Rule, order: number, unit: CompileUnit): CompiledRule {
  const scope = new Scope(unit);
  const variables = r.variables.map((v) => {
    const value = compileVariable(v, scope);
    return { slot: scope.bind(v.name), value };
  });
  const checks = r.checks.map((c) => compileCheck(c, scope));
  return {
    priority: r.priority,
    order,
    scope,
    context: r.context,
    variables,
    checks,
    apply: compileApplier(r.applyTo, unit),
  };
}

function compileCheck(c: Check, scope: Scope): CompiledCheck {
  const select = compileExpr(c.location.select, scope);
  const mode = c.location.mode;
  if (mode !== 'schematron-select-full-path' && mode !== 'schematron-get-full-path') {
    throw new Unsupported(`location mode ${mode}`);
  }
  const location = (ctx: Ctx): string => {
    let out = '';
    for (const it of select(ctx)) {
      if (!isNode(it)) throw new Unsupported('a location of an atomic value');
      out += locationText(it, mode);
    }
    return out;
  };
  return {
    kind: c.kind === 'assert' ? 'failed-assert' : 'successful-report',
    test: compileExpr(c.test, scope),
    id: c.id ?? '',
    testText: c.testText,
    flag: c.flag ?? '',
    location,
    text: c.text.map((part) => (part.k === 'text' ? part.v : compileExpr(part.select, scope))),
  };
}

/** What the skeleton's location templates write for a node (built-in templates copy the text of other nodes). */
function locationText(n: XNode, mode: string): string {
  switch (n.kind) {
    case ELEMENT:
      return fullPath(n);
    case ATTRIBUTE:
      return mode === 'schematron-get-full-path' ? attributePath(n) : n.value;
    case DOCUMENT: {
      let out = '';
      for (const c of n.children) out += locationText(c, mode);
      return out;
    }
    case TEXT:
      return n.value;
    default:
      return '';
  }
}

function fullPath(el: XNode): string {
  let out = '';
  for (let n: XNode | null = el; n && n.kind === ELEMENT; n = n.parent) {
    let preceding = 0;
    if (n.parent) {
      for (const s of n.parent.elements) {
        if (s === n) break;
        if (s.local === n.local && s.ns === n.ns) preceding++;
      }
    }
    const step = n.ns === '' ? n.name : `*:${n.local}[namespace-uri()='${n.ns}']`;
    out = `/${step}[${1 + preceding}]${out}`;
  }
  return out;
}

function attributePath(a: XNode): string {
  const parent = a.parent && a.parent.kind === ELEMENT ? fullPath(a.parent) : '';
  return a.ns === '' ? `${parent}/@${a.name}` : `${parent}/@*[local-name()='${a.local}' and namespace-uri()='${a.ns}']`;
}

// ---------------------------------------------------------------------------------------------------------------------
// Running

/** Time spent per rule part (profiling): `match`, `<context> variables`, and each check by id (or test text). */
export type RuleProfile = Map<string, { ms: number; count: number }>;

export function runProgram(program: CompiledProgram, doc: XNode, profile?: RuleProfile): RawAssertion[] {
  const run: RunState = {
    doc,
    globals: new Array<Sequence | undefined>(program.globals.length),
    memo: new Array<Sequence | undefined>(program.unit.memoSlots),
    globalEvaluators: program.globals,
    keys: new Array<Map<string, XNode[]> | undefined>(program.unit.keys.size),
  };
  const out: RawAssertion[] = [];
  for (const pattern of program.patterns) walk(pattern, doc, 1, 1, run, out, profile);
  return out;
}

function findRule(pattern: CompiledPattern, n: XNode, run: RunState): CompiledRule | undefined {
  const list = (n.key !== '' ? pattern.byKey.get(n.key) : undefined) ?? pattern.generic;
  for (const c of list) if (c.matches(n, run)) return c.rule;
  return undefined;
}

function timed<T>(profile: RuleProfile, key: string, f: () => T): T {
  const t = performance.now();
  try {
    return f();
  } finally {
    const e = profile.get(key) ?? { ms: 0, count: 0 };
    e.ms += performance.now() - t;
    e.count++;
    profile.set(key, e);
  }
}

function walk(
  pattern: CompiledPattern,
  n: XNode,
  pos: number,
  size: number,
  run: RunState,
  out: RawAssertion[],
  profile: RuleProfile | undefined,
): void {
  const rule = profile ? timed(profile, 'match', () => findRule(pattern, n, run)) : findRule(pattern, n, run);
  let next: readonly XNode[];
  if (rule) {
    const vars = new Array<Sequence>(rule.scope.frameSize);
    const ctx: Ctx = { item: n, pos, size, current: n, doc: run.doc, vars, run };
    if (profile) {
      timed(profile, `${rule.context} (variables)`, () => {
        for (const v of rule.variables) ctx.vars[v.slot] = v.value(ctx);
      });
      for (const c of rule.checks) {
        const hit = timed(profile, c.id || c.testText, () => ebv(c.test(ctx)));
        if (hit === (c.kind === 'successful-report')) out.push(emit(c, ctx));
      }
    } else {
      for (const v of rule.variables) ctx.vars[v.slot] = v.value(ctx);
      for (const c of rule.checks) {
        const hit = ebv(c.test(ctx));
        if (hit === (c.kind === 'successful-report')) out.push(emit(c, ctx));
      }
    }
    if (rule.apply === ATTRS_AND_ELEMENTS) return walkAttributesAndElements(pattern, n, run, out, profile);
    next = rule.apply(n, ctx);
  } else if (n.kind === DOCUMENT) {
    // The built-in rule for the document node: on to its children.
    next = n.children;
  } else if (n.kind === TEXT || n.kind === ATTRIBUTE) {
    // The mode's text() rule, or the built-in one for attributes: nothing further.
    return;
  } else if (!pattern.defaultApply) {
    if (n.kind !== ELEMENT) return;
    next = n.children;
  } else if (pattern.defaultApply === ATTRS_AND_ELEMENTS) {
    return walkAttributesAndElements(pattern, n, run, out, profile);
  } else {
    const ctx: Ctx = { item: n, pos, size, current: n, doc: run.doc, vars: [], run };
    next = pattern.defaultApply(n, ctx);
  }
  const count = next.length;
  for (let k = 0; k < count; k++) walk(pattern, next[k]!, k + 1, count, run, out, profile);
}

/** apply-templates select="@*|*" (the skeleton's usual), walked without building the node list. */
function walkAttributesAndElements(
  pattern: CompiledPattern,
  n: XNode,
  run: RunState,
  out: RawAssertion[],
  profile: RuleProfile | undefined,
): void {
  const attrs = n.attrs;
  const elements = n.elements;
  const total = attrs.length + elements.length;
  for (let k = 0; k < attrs.length; k++) walk(pattern, attrs[k]!, k + 1, total, run, out, profile);
  for (let k = 0; k < elements.length; k++) walk(pattern, elements[k]!, attrs.length + k + 1, total, run, out, profile);
}

function emit(c: CompiledCheck, ctx: Ctx): RawAssertion {
  let text = '';
  for (const part of c.text) text += typeof part === 'string' ? part : valueOfText(part(ctx), ' ');
  return { kind: c.kind, id: c.id, flag: c.flag, location: c.location(ctx), text: normalizeSpace(text) };
}

/** XPath normalize-space: only space, tab, CR and LF count (not U+00A0, which String.prototype.trim strips). */
function normalizeSpace(s: string): string {
  return s.replace(/[ \t\r\n]+/g, ' ').replace(/^ | $/g, '');
}

export type { Sequence };
