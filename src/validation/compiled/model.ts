/**
 * The compiled Schematron engine's shared model: the XPath data model it evaluates over (a read-only node tree built
 * once per document), the atomic values, the parsed XPath 2.0 expression tree, and the evaluation context. The parser
 * (xpath-parser.ts), the value runtime and function library (runtime.ts, functions.ts), the evaluator (evaluate.ts) and
 * the rule driver (engine.ts) all speak these types.
 */

// ---------------------------------------------------------------------------------------------------------------------
// Nodes

export const DOCUMENT = 9;
export const ELEMENT = 1;
export const ATTRIBUTE = 2;
export const TEXT = 3;
export const COMMENT = 8;
export const PI = 7;
export type NodeKind = typeof DOCUMENT | typeof ELEMENT | typeof ATTRIBUTE | typeof TEXT | typeof COMMENT | typeof PI;

/**
 * One node of the XDM tree. Adjacent text and CDATA are one text node (as in XDM); namespace declarations are not
 * attributes. `order` is the position in document order (attributes after their element, before its children).
 */
export interface XNode {
  readonly kind: NodeKind;
  /** Namespace URI ('' for none); '' for text, comment, document. */
  readonly ns: string;
  /** Local name; the target for a processing instruction; '' for text, comment, document. */
  readonly local: string;
  /** The lexical QName as written (prefix:local or local); '' where there is none. */
  readonly name: string;
  readonly parent: XNode | null;
  /** Child nodes in order (elements, text, comments, PIs); empty for others. */
  readonly children: readonly XNode[];
  /** Element children only, in order. */
  readonly elements: readonly XNode[];
  readonly attrs: readonly XNode[];
  readonly order: number;
  /** The largest `order` in this node's subtree (its own for a leaf): descendants are exactly (order, end]. */
  readonly end: number;
  /** Text, attribute, comment and PI content; '' for elements and the document. */
  readonly value: string;
  /** Position among the parent's `children` (attributes: among `attrs`). */
  readonly index: number;
  readonly root: XNode;
  /** `E{ns}local` for an element, `A{ns}local` for an attribute, '' otherwise: rule lookup and name indexes. */
  readonly key: string;
}

// ---------------------------------------------------------------------------------------------------------------------
// Atomic values and sequences
//
// xs:string is a JS string, xs:boolean a JS boolean, xs:double a JS number. The other types are classes so that the
// runtime can tell them apart (type promotion, casts and comparisons depend on the dynamic type).

/** xs:untypedAtomic: what atomizing a node yields (no schema). */
export class Untyped {
  constructor(readonly s: string) {}
}

/** xs:decimal, and xs:integer when `integer` is set: `units` × 10^-`scale`, exact. */
export class Dec {
  constructor(
    readonly units: bigint,
    readonly scale: number,
    readonly integer: boolean,
  ) {}
}

/** xs:float (kept apart from xs:double: its casts and string forms differ). */
export class Flt {
  constructor(readonly n: number) {}
}

/**
 * Any other atomic value the runtime supports (dates, times, durations, xs:anyURI, xs:QName, …): the runtime owns the
 * concrete classes; `type` is the local name of its XML Schema type ('date', 'dateTime', 'anyURI', …).
 */
export interface OtherAtomic {
  readonly type: string;
}

export type Atomic = string | boolean | number | Untyped | Dec | Flt | OtherAtomic;
export type Item = XNode | Atomic;
/** Every XPath value is a sequence; nodes in a sequence that came from a path are in document order without repeats. */
export type Sequence = readonly Item[];

export function isNode(item: Item): item is XNode {
  return typeof item === 'object' && item !== null && 'kind' in item && 'order' in item;
}

// ---------------------------------------------------------------------------------------------------------------------
// Errors

/** A dynamic or static XPath error with its W3C code (FORG0001, XPTY0004, FOAR0001, …). */
export class XPathError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'XPathError';
  }
}

/** The compiler cannot handle a construct: the pack (or rule) runs on SaxonJS instead. */
export class Unsupported extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Unsupported';
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Expressions (XPath 2.0), names resolved at parse time

export interface QName {
  /** Namespace URI, '' for none. */
  readonly ns: string;
  readonly local: string;
}

export const FN_NS = 'http://www.w3.org/2005/xpath-functions';
export const XS_NS = 'http://www.w3.org/2001/XMLSchema';

export type Axis =
  | 'child'
  | 'descendant'
  | 'attribute'
  | 'self'
  | 'descendant-or-self'
  | 'following-sibling'
  | 'following'
  | 'parent'
  | 'ancestor'
  | 'preceding-sibling'
  | 'preceding'
  | 'ancestor-or-self';

export type NodeTest =
  /** A name test: `ns` / `local` may be '*' (wildcards `*`, `p:*`, `*:l`). */
  | { readonly k: 'name'; readonly ns: string; readonly local: string }
  /** A kind test: node(), text(), comment(), processing-instruction(n?), element(n?), attribute(n?), document-node(). */
  | {
      readonly k: 'kind';
      readonly kind: 'node' | 'text' | 'comment' | 'pi' | 'element' | 'attribute' | 'document';
      readonly name?: QName | '*';
    };

export type Step =
  | { readonly k: 'axis'; readonly axis: Axis; readonly test: NodeTest; readonly preds: readonly Expr[] }
  /** A filter expression used as a step (a primary with predicates, e.g. `$x[1]`, `(a|b)`, `f()`). */
  | { readonly k: 'filter'; readonly expr: Expr; readonly preds: readonly Expr[] };

/** The sequence type of `instance of` / `treat as`: `empty-sequence()`, or an item type with an occurrence. */
export type SequenceType =
  | { readonly k: 'empty' }
  | {
      readonly k: 'item';
      /** An atomic type (xs:…), `item()`, or a node kind test. */
      readonly item: { readonly k: 'atomic'; readonly type: QName } | { readonly k: 'anyItem' } | NodeTest;
      readonly occ: '' | '?' | '*' | '+';
    };

export type Expr =
  | { readonly k: 'string'; readonly v: string }
  /** Numeric literals keep their lexical form: integer (xs:integer), decimal (xs:decimal), double (xs:double). */
  | { readonly k: 'integer'; readonly v: string }
  | { readonly k: 'decimal'; readonly v: string }
  | { readonly k: 'double'; readonly v: string }
  | { readonly k: 'var'; readonly name: QName }
  | { readonly k: 'context' }
  /** The comma operator; `()` is an empty `seq`. */
  | { readonly k: 'seq'; readonly items: readonly Expr[] }
  | { readonly k: 'call'; readonly fn: QName; readonly args: readonly Expr[] }
  /**
   * A path. `root`: 'none' (relative), 'root' (starts with `/`), 'rootDescendant' (starts with `//`, which is `/`
   * followed by a descendant-or-self::node() step already present in `steps`). `/` alone is root with no steps.
   * `a//b` has a descendant-or-self::node() step between a and b.
   */
  | { readonly k: 'path'; readonly root: 'none' | 'root' | 'rootDescendant'; readonly steps: readonly Step[] }
  | { readonly k: 'or' | 'and'; readonly l: Expr; readonly r: Expr }
  | { readonly k: 'gcmp'; readonly op: '=' | '!=' | '<' | '<=' | '>' | '>='; readonly l: Expr; readonly r: Expr }
  | { readonly k: 'vcmp'; readonly op: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge'; readonly l: Expr; readonly r: Expr }
  | { readonly k: 'ncmp'; readonly op: 'is' | '<<' | '>>'; readonly l: Expr; readonly r: Expr }
  | {
      readonly k: 'arith';
      readonly op: '+' | '-' | '*' | 'div' | 'idiv' | 'mod';
      readonly l: Expr;
      readonly r: Expr;
    }
  | { readonly k: 'neg' | 'plus'; readonly e: Expr }
  | { readonly k: 'range'; readonly l: Expr; readonly r: Expr }
  | { readonly k: 'union' | 'intersect' | 'except'; readonly l: Expr; readonly r: Expr }
  | {
      readonly k: 'for';
      readonly bindings: ReadonlyArray<{ readonly name: QName; readonly in: Expr }>;
      readonly ret: Expr;
    }
  | {
      readonly k: 'some' | 'every';
      readonly bindings: ReadonlyArray<{ readonly name: QName; readonly in: Expr }>;
      readonly sat: Expr;
    }
  | { readonly k: 'if'; readonly c: Expr; readonly t: Expr; readonly e: Expr }
  | { readonly k: 'instanceOf' | 'treatAs'; readonly e: Expr; readonly type: SequenceType }
  /** `cast as` / `castable as` an atomic type; `optional` for the `?` after the type. */
  | { readonly k: 'cast' | 'castable'; readonly e: Expr; readonly type: QName; readonly optional: boolean };

/** Resolves a prefix used in an expression to its namespace URI (undefined: undeclared, a static error). */
export type NamespaceResolver = (prefix: string) => string | undefined;

// ---------------------------------------------------------------------------------------------------------------------
// Evaluation

/** The dynamic context of one evaluation. */
export interface DynContext {
  /** The context item (undefined where there is none: XPDY0002 when used). */
  readonly item: Item | undefined;
  /** position() and last(), 1-based. */
  readonly pos: number;
  readonly size: number;
  /** XSLT current(): the node the rule fired on. */
  readonly current: Item | undefined;
  /** The document being validated. */
  readonly doc: XNode;
}

/** A built-in or stylesheet function: arguments are already evaluated sequences. */
export type FunctionImpl = (ctx: DynContext, args: readonly Sequence[]) => Sequence;

/** Key of a function in a function table: `{ns}local#arity`. */
export function functionKey(name: QName, arity: number): string {
  return `{${name.ns}}${name.local}#${arity}`;
}
