import jsep from 'jsep';
import { RE2JS } from 're2js';
import { GatewayError } from '../../core/gateway-error';
import { FilterSyntaxError, Token, scan } from './lexer';

/**
 * The hook filter language (spec 6.8): C#-lambda-looking conditions such as
 * `sender == "0106:123" && verdict.StartsWith("OK") || !topic.Contains("Order")`.
 *
 * Grammar: string, number and boolean literals; variable names; `==`, `!=`, `&&`, `||`, `!`, parentheses; and the
 * string methods of STRING_METHODS called on a value. Nothing else: no other operators, no property access, no calls
 * of anything but those methods, no indexing, no `this`, no functions. Text is parsed with jsep and then checked
 * against this allow-list, and turned into our own small tree; user text is never executed (no eval, Function, vm).
 *
 * Work is bounded at compile time (length, node count, regex size), so an evaluation is one pass over the tree
 * and linear in the size of the values it reads; regexes run on RE2 (linear time, no backtracking).
 */

export const FILTER_LIMITS = {
  /** Characters of filter text. */
  maxLength: 2000,
  /** Operators, operands and method calls. */
  maxNodes: 200,
  /** Characters of one regex pattern. */
  maxRegexLength: 256,
  /** RE2 program size (its own cost measure) of all regexes of one filter together. */
  maxRegexProgramSize: 4000,
} as const;

type MethodName = 'StartsWith' | 'EndsWith' | 'Contains' | 'Equals' | 'ToLower' | 'ToUpper' | 'IsMatch';

interface MethodSpec {
  readonly name: MethodName;
  readonly arity: 0 | 1;
  readonly returns: 'boolean' | 'string';
}

const spec = (name: MethodName, arity: 0 | 1, returns: 'boolean' | 'string'): MethodSpec => ({ name, arity, returns });

/** Method names are case-sensitive; the C# names of the contract plus their camelCase aliases. */
export const STRING_METHODS: ReadonlyMap<string, MethodSpec> = new Map([
  ['StartsWith', spec('StartsWith', 1, 'boolean')],
  ['startsWith', spec('StartsWith', 1, 'boolean')],
  ['EndsWith', spec('EndsWith', 1, 'boolean')],
  ['endsWith', spec('EndsWith', 1, 'boolean')],
  ['Contains', spec('Contains', 1, 'boolean')],
  ['contains', spec('Contains', 1, 'boolean')],
  ['Equals', spec('Equals', 1, 'boolean')],
  ['equals', spec('Equals', 1, 'boolean')],
  ['ToLower', spec('ToLower', 0, 'string')],
  ['toLower', spec('ToLower', 0, 'string')],
  ['ToUpper', spec('ToUpper', 0, 'string')],
  ['toUpper', spec('ToUpper', 0, 'string')],
  ['IsMatch', spec('IsMatch', 1, 'boolean')],
  ['isMatch', spec('IsMatch', 1, 'boolean')],
  ['Matches', spec('IsMatch', 1, 'boolean')],
  ['matches', spec('IsMatch', 1, 'boolean')],
]);

/** The compiled tree. Immutable; safe to cache and share. */
export type FilterNode =
  | { readonly k: 'lit'; readonly v: string | number | boolean }
  | { readonly k: 'var'; readonly name: string }
  | { readonly k: 'not'; readonly a: FilterNode }
  | { readonly k: 'and' | 'or' | 'eq' | 'ne'; readonly a: FilterNode; readonly b: FilterNode }
  | {
      readonly k: 'call';
      readonly m: Exclude<MethodName, 'IsMatch'>;
      readonly recv: FilterNode;
      readonly arg?: FilterNode;
    }
  | { readonly k: 'match'; readonly recv: FilterNode; readonly re: RE2JS };

export interface CompiledFilter {
  readonly source: string;
  readonly root: FilterNode;
  readonly nodeCount: number;
}

type StaticType = 'string' | 'number' | 'boolean' | 'any';

interface Converted {
  node: FilterNode;
  type: StaticType;
}

class FilterCompileError extends Error {
  constructor(
    readonly index: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const isCondition = (t: StaticType): boolean => t === 'boolean' || t === 'any';
const isTextual = (t: StaticType): boolean => t === 'string' || t === 'any';

function describe(t: StaticType): string {
  return t === 'any' ? 'a value' : `a ${t}`;
}

/**
 * Compiles filter text. Throws GatewayError('BAD_REQUEST') naming the column (1-based) and the reason; the same text
 * always gives the same result, so a filter accepted at hook creation compiles again at routing time.
 */
export function compileFilter(text: string): CompiledFilter {
  try {
    return compileOrThrow(text);
  } catch (e) {
    if (e instanceof FilterSyntaxError || e instanceof FilterCompileError) throw badFilter(e.index, e.reason);
    throw e;
  }
}

function badFilter(index: number, reason: string): GatewayError {
  const column = index + 1;
  return new GatewayError('BAD_REQUEST', `Invalid filter at column ${column}: ${reason}`, {
    details: { column, reason },
  });
}

function compileOrThrow(text: string): CompiledFilter {
  if (typeof text !== 'string') throw new FilterCompileError(0, 'the filter must be a string');
  if (text.length > FILTER_LIMITS.maxLength) {
    throw new FilterCompileError(FILTER_LIMITS.maxLength, `longer than ${FILTER_LIMITS.maxLength} characters`);
  }
  const tokens = scan(text);
  if (tokens.length === 0) throw new FilterCompileError(0, 'the filter is empty');
  // Parentheses and commas are tokens without nodes, so 3 × the node cap is generous; it bounds jsep's work (and its
  // recursion on nested parentheses) before a tree is built.
  if (tokens.length > FILTER_LIMITS.maxNodes * 3) {
    throw new FilterCompileError(
      tokens[FILTER_LIMITS.maxNodes * 3]?.index ?? 0,
      `more than ${FILTER_LIMITS.maxNodes} operands and operators`,
    );
  }

  let ast: jsep.Expression;
  try {
    ast = jsep(text);
  } catch (e) {
    const err = e as { index?: unknown; description?: unknown; message?: unknown };
    const index = typeof err.index === 'number' ? err.index : 0;
    const reason =
      typeof err.description === 'string'
        ? err.description
        : typeof err.message === 'string'
          ? err.message
          : 'syntax error';
    throw new FilterCompileError(index, reason);
  }

  const converter = new Converter(tokens, text.length);
  const { node, type } = converter.convert(ast);
  if (!isCondition(type)) {
    throw new FilterCompileError(
      0,
      `the filter must be a condition (true or false), not ${describe(type)}; e.g. sender == "0106:123"`,
    );
  }
  return Object.freeze({ source: text, root: node, nodeCount: converter.nodeCount });
}

/**
 * Walks jsep's tree in source order. Identifiers and literals ("leaves") appear in the tree in the same order as in the
 * text, so the n-th leaf visited is the n-th identifier/string/number token of the scan; that gives every error a
 * column although jsep's nodes carry none.
 */
class Converter {
  nodeCount = 0;
  private leaf = 0;
  private regexBudget: number = FILTER_LIMITS.maxRegexProgramSize;
  private readonly leafTokens: Token[];

  constructor(
    private readonly tokens: Token[],
    private readonly length: number,
  ) {
    this.leafTokens = tokens.filter((t) => t.kind !== 'punct');
  }

  /** Column of the next leaf to visit: the start of the node about to be converted. */
  private here(): number {
    return this.leafTokens[this.leaf]?.index ?? this.length;
  }

  /** Offset of the first operator token after the most recently visited leaf (skipping closing parentheses). */
  private operatorAfterLastLeaf(): number {
    const last = this.leafTokens[this.leaf - 1];
    if (!last) return 0;
    const start = this.tokens.indexOf(last) + 1;
    for (let i = start; i < this.tokens.length; i++) {
      const t = this.tokens[i] as Token;
      if (t.text !== ')') return t.index;
    }
    return this.length;
  }

  private count(at: number): void {
    if (++this.nodeCount > FILTER_LIMITS.maxNodes) {
      throw new FilterCompileError(at, `more than ${FILTER_LIMITS.maxNodes} operands and operators`);
    }
  }

  /** Recursion depth is bounded by the node cap; jsep never sees more than 3 × that many tokens. */
  convert(n: jsep.Expression): Converted {
    const at = this.here();
    this.count(at);
    switch (n.type) {
      case 'Literal':
        return this.literal(n as jsep.Literal, at);
      case 'Identifier':
        this.leaf++;
        return { node: { k: 'var', name: (n as jsep.Identifier).name }, type: 'any' };
      case 'UnaryExpression':
        return this.unary(n as jsep.UnaryExpression, at);
      case 'BinaryExpression':
        return this.binary(n as jsep.BinaryExpression);
      case 'CallExpression':
        return this.call(n as jsep.CallExpression, at);
      case 'MemberExpression':
        return this.refuseMember(n as jsep.MemberExpression);
      case 'ThisExpression':
        throw new FilterCompileError(at, '"this" is not supported; name a variable such as sender');
      case 'Compound':
        throw this.compound(n as jsep.Compound);
      case 'SequenceExpression':
        throw new FilterCompileError(at, 'a comma list is not an expression');
      case 'ConditionalExpression':
        throw new FilterCompileError(at, 'the conditional operator is not supported');
      case 'ArrayExpression':
        throw new FilterCompileError(at, 'arrays are not supported');
      default:
        throw new FilterCompileError(at, `${String(n.type)} is not supported`);
    }
  }

  private literal(n: jsep.Literal, at: number): Converted {
    this.leaf++;
    const v = n.value;
    if (typeof v === 'string') return { node: { k: 'lit', v }, type: 'string' };
    if (typeof v === 'boolean') return { node: { k: 'lit', v }, type: 'boolean' };
    if (typeof v === 'number' && Number.isFinite(v)) return { node: { k: 'lit', v }, type: 'number' };
    if (v === null) {
      throw new FilterCompileError(at, 'null is not supported: a missing variable already makes == and != false');
    }
    throw new FilterCompileError(at, 'unsupported literal');
  }

  private unary(n: jsep.UnaryExpression, at: number): Converted {
    if (n.operator !== '!') throw new FilterCompileError(at, `"${n.operator}" is not supported`);
    const a = this.convert(n.argument);
    if (!isCondition(a.type)) throw new FilterCompileError(at, `"!" needs a condition, not ${describe(a.type)}`);
    return { node: { k: 'not', a: a.node }, type: 'boolean' };
  }

  private binary(n: jsep.BinaryExpression): Converted {
    const left = this.convert(n.left);
    const opAt = this.operatorAfterLastLeaf();
    const op = n.operator;
    if (op !== '==' && op !== '!=' && op !== '&&' && op !== '||') {
      throw new FilterCompileError(opAt, `"${op}" is not supported`);
    }
    const right = this.convert(n.right);
    if (op === '&&' || op === '||') {
      for (const side of [left, right]) {
        if (!isCondition(side.type))
          throw new FilterCompileError(opAt, `"${op}" needs conditions on both sides, not ${describe(side.type)}`);
      }
      return { node: { k: op === '&&' ? 'and' : 'or', a: left.node, b: right.node }, type: 'boolean' };
    }
    const known = left.type !== 'any' && right.type !== 'any';
    const numericText = (a: StaticType, b: StaticType) => a === 'string' && b === 'number';
    if (
      known &&
      left.type !== right.type &&
      !numericText(left.type, right.type) &&
      !numericText(right.type, left.type)
    ) {
      throw new FilterCompileError(
        opAt,
        `"${op}" compares ${describe(left.type)} with ${describe(right.type)}; that is never equal`,
      );
    }
    return { node: { k: op === '==' ? 'eq' : 'ne', a: left.node, b: right.node }, type: 'boolean' };
  }

  private call(n: jsep.CallExpression, at: number): Converted {
    const callee = n.callee;
    if (callee.type !== 'MemberExpression') {
      const name = callee.type === 'Identifier' ? `"${(callee as jsep.Identifier).name}"` : 'this';
      throw new FilterCompileError(
        at,
        `calling ${name} is not allowed; only string methods such as sender.StartsWith("…")`,
      );
    }
    const member = callee as jsep.MemberExpression;
    if (member.optional) throw new FilterCompileError(at, 'optional chaining is not supported');
    const recv = this.convert(member.object);
    const nameAt = this.here();
    if (member.computed || member.property.type !== 'Identifier') {
      throw new FilterCompileError(nameAt, 'computed member access is not allowed');
    }
    const methodName = (member.property as jsep.Identifier).name;
    this.leaf++;
    const method = STRING_METHODS.get(methodName);
    if (!method) {
      throw new FilterCompileError(
        nameAt,
        `unknown method "${methodName}"; use one of ` +
          `${[...new Set([...STRING_METHODS.values()].map((m) => m.name))].join(', ')} (or Matches)`,
      );
    }
    if (!isTextual(recv.type))
      throw new FilterCompileError(nameAt, `${methodName} needs a string, not ${describe(recv.type)}`);
    const args = n.arguments;
    if (args.length !== method.arity) {
      throw new FilterCompileError(
        nameAt,
        `${methodName} takes ${method.arity === 0 ? 'no argument' : 'one argument'}, not ${args.length}`,
      );
    }
    if (method.name === 'IsMatch') {
      const argAt = this.here();
      const arg = args[0] as jsep.Expression;
      if (arg.type !== 'Literal' || typeof (arg as jsep.Literal).value !== 'string') {
        throw new FilterCompileError(
          argAt,
          `${methodName} needs a regular expression written as a string literal, e.g. ${methodName}("^0106:")`,
        );
      }
      this.count(argAt);
      this.leaf++;
      return {
        node: { k: 'match', recv: recv.node, re: this.regex((arg as jsep.Literal).value as string, argAt) },
        type: 'boolean',
      };
    }
    let arg: Converted | undefined;
    if (method.arity === 1) {
      const argAt = this.here();
      arg = this.convert(args[0] as jsep.Expression);
      if (!isTextual(arg.type))
        throw new FilterCompileError(argAt, `${methodName} needs a string argument, not ${describe(arg.type)}`);
    }
    const node: FilterNode = arg
      ? { k: 'call', m: method.name, recv: recv.node, arg: arg.node }
      : { k: 'call', m: method.name, recv: recv.node };
    return { node, type: method.returns };
  }

  private regex(pattern: string, at: number): RE2JS {
    if (pattern.length > FILTER_LIMITS.maxRegexLength) {
      throw new FilterCompileError(at, `regular expression longer than ${FILTER_LIMITS.maxRegexLength} characters`);
    }
    let re: RE2JS;
    try {
      re = RE2JS.compile(pattern);
    } catch (e) {
      throw new FilterCompileError(at, `invalid regular expression: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.regexBudget -= re.programSize();
    if (this.regexBudget < 0)
      throw new FilterCompileError(at, 'regular expressions too large (repetition counts make RE2 programs big)');
    return re;
  }

  private refuseMember(n: jsep.MemberExpression): never {
    if (n.computed) {
      this.convert(n.object);
      throw new FilterCompileError(this.here(), 'computed member access is not allowed');
    }
    this.convert(n.object);
    const name = n.property.type === 'Identifier' ? (n.property as jsep.Identifier).name : '?';
    throw new FilterCompileError(
      this.here(),
      STRING_METHODS.has(name)
        ? `${name} is a method: call it, e.g. .${name}(…)`
        : `property access (".${name}") is not allowed; only string methods can follow a dot`,
    );
  }

  private compound(n: jsep.Compound): FilterCompileError {
    const first = n.body[0];
    if (first) this.convert(first);
    return new FilterCompileError(this.here(), 'expected an operator (==, !=, && or ||) between two values');
  }
}
