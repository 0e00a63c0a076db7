import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { HookForRouting, selectHooks } from '../../../src/core/topics';
import {
  FILTER_LIMITS,
  compileFilter,
  createFilterPredicate,
  evaluate,
  filterVariables,
} from '../../../src/webhooks/filter';
import type { GatewayEvent } from '../../../src/webhooks/event-payload';

const run = (text: string, vars: Record<string, unknown> = {}) => evaluate(compileFilter(text), vars);

function compileError(text: string): GatewayError {
  try {
    compileFilter(text);
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw new Error(`expected a GatewayError, got ${String(e)}`);
  }
  throw new Error(`expected "${text}" to be refused`);
}

describe('the contract example', () => {
  const f = compileFilter('sender == "0106:123" && verdict.StartsWith("OK") || sender == "0106:999"');
  it.each([
    [{ sender: '0106:123', verdict: 'OK: fine' }, true],
    [{ sender: '0106:123', verdict: 'NOK' }, false],
    [{ sender: '0106:999' }, true],
    [{ sender: '0106:1', verdict: 'OK' }, false],
    [{}, false],
  ])('%j → %s', (vars, expected) => {
    expect(evaluate(f, vars)).toBe(expected);
  });
});

describe('operators', () => {
  it('== and != compare strings ordinally', () => {
    expect(run('a == "x"', { a: 'x' })).toBe(true);
    expect(run('a == "X"', { a: 'x' })).toBe(false);
    expect(run('a != "X"', { a: 'x' })).toBe(true);
    expect(run("a == 'single'", { a: 'single' })).toBe(true);
    expect(run('a == b', { a: 'x', b: 'x' })).toBe(true);
    expect(run('"é" == a', { a: 'é' })).toBe(true);
  });

  it('&& binds tighter than ||, == tighter than both, parentheses override', () => {
    expect(run('a == "1" || a == "2" && b == "3"', { a: '1', b: 'x' })).toBe(true);
    expect(run('(a == "1" || a == "2") && b == "3"', { a: '1', b: 'x' })).toBe(false);
  });

  it('! negates a condition', () => {
    expect(run('!(a == "1")', { a: '2' })).toBe(true);
    expect(run('!a.StartsWith("x")', { a: 'xy' })).toBe(false);
    expect(run('!!flag', { flag: true })).toBe(true);
  });

  it('short-circuits', () => {
    const vars = { a: 'x' };
    expect(run('a == "x" || missing.IsMatch("(a+)+$")', vars)).toBe(true);
    expect(run('a == "y" && missing.IsMatch("x")', vars)).toBe(false);
  });

  it('compares numbers with decimal strings (details values are strings)', () => {
    expect(run('attempt == 3', { attempt: '3' })).toBe(true);
    expect(run('3 == attempt', { attempt: '3' })).toBe(true);
    expect(run('attempt == 3', { attempt: '03.0' })).toBe(true);
    expect(run('attempt == 3', { attempt: '3 ' })).toBe(false);
    expect(run('attempt == 3', { attempt: '0x3' })).toBe(false);
    expect(run('attempt != 3', { attempt: '4' })).toBe(true);
    expect(run('attempt == 2.5', { attempt: 2.5 })).toBe(true);
  });

  it('booleans compare with booleans and stand alone as conditions', () => {
    expect(run('isCredit == false', { isCredit: false })).toBe(true);
    expect(run('isCredit', { isCredit: true })).toBe(true);
    expect(run('isCredit', { isCredit: 'true' })).toBe(false);
    expect(run('true')).toBe(true);
    expect(run('false || true')).toBe(true);
  });
});

describe('unknown variables', () => {
  it('make == and != false, never throw', () => {
    expect(run('nope == "x"')).toBe(false);
    expect(run('nope != "x"')).toBe(false);
    expect(run('nope == nope')).toBe(false);
    expect(run('!(nope == "x")')).toBe(true);
    expect(run('nope')).toBe(false);
  });

  it('make string methods false and ToLower/ToUpper absent', () => {
    for (const m of [
      'StartsWith("a")',
      'EndsWith("a")',
      'Contains("a")',
      'Equals("a")',
      'IsMatch("a")',
      'ToLower() == "a"',
      'ToUpper() != "a"',
    ]) {
      expect(run(`nope.${m}`)).toBe(false);
    }
    expect(run('a.StartsWith(nope)', { a: 'x' })).toBe(false);
  });

  it('treat values that are not strings, finite numbers or booleans as absent', () => {
    for (const v of [null, undefined, {}, [], ['x'], () => 'x', NaN, Infinity, 1n, Symbol('x')]) {
      expect(run('a == "x"', { a: v })).toBe(false);
      expect(run('a != "x"', { a: v })).toBe(false);
      expect(run('a.Contains("")', { a: v })).toBe(false);
    }
    expect(run('a.StartsWith("x")', { a: 7 })).toBe(false);
  });

  it('do not reach the prototype chain', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(run(`${name} == "x"`, {})).toBe(false);
      expect(run(`${name}.Contains("function")`, {})).toBe(false);
      expect(run(`${name}.Contains("x")`, { [name]: 'x' })).toBe(true);
    }
  });

  it('survive hostile or missing variable records', () => {
    const f = compileFilter('a == "x"');
    expect(evaluate(f, null as unknown as Record<string, unknown>)).toBe(false);
    expect(evaluate(f, 'str' as unknown as Record<string, unknown>)).toBe(false);
    const throwing = new Proxy(
      {},
      {
        getOwnPropertyDescriptor() {
          throw new Error('boom');
        },
        get() {
          throw new Error('boom');
        },
      },
    );
    expect(evaluate(f, throwing)).toBe(false);
    expect(
      evaluate(
        f,
        Object.defineProperty({}, 'a', {
          get() {
            throw new Error('boom');
          },
          enumerable: true,
        }),
      ),
    ).toBe(false);
  });
});

describe('string methods', () => {
  const vars = { s: 'Invoice-2026', e: '' };
  it.each([
    ['s.StartsWith("Inv")', true],
    ['s.startsWith("inv")', false],
    ['s.EndsWith("2026")', true],
    ['s.endsWith("2025")', false],
    ['s.Contains("ice-")', true],
    ['s.contains("ICE")', false],
    ['s.Equals("Invoice-2026")', true],
    ['s.equals("invoice-2026")', false],
    ['s.ToLower() == "invoice-2026"', true],
    ['s.toLower().StartsWith("inv")', true],
    ['s.ToUpper() == "INVOICE-2026"', true],
    ['s.toUpper().Contains("VOICE")', true],
    ['s.IsMatch("^Inv.*\\\\d{4}$")', true],
    ['s.isMatch("^\\\\d")', false],
    ['s.Matches("ice-20")', true],
    ['s.matches("(?i)^invoice")', true],
    ['e.Contains("")', true],
    ['e.StartsWith("")', true],
    ['"literal".StartsWith("lit")', true],
    ['s.StartsWith(s.ToLower())', false],
    ['s.ToLower().Equals(s.ToLower())', true],
  ])('%s → %s', (text, expected) => {
    expect(run(text, vars)).toBe(expected);
  });

  it('regexes search anywhere, like .NET Regex.IsMatch', () => {
    expect(run('s.IsMatch("2026")', vars)).toBe(true);
  });

  it('a catastrophic pattern on a long input finishes fast (RE2, no backtracking)', () => {
    const f = compileFilter('s.IsMatch("(a+)+$") || s.Matches("^(a|aa)*b$") || s.IsMatch("(x+x+)+y")');
    for (const input of ['a'.repeat(27) + '!', 'a'.repeat(100_000) + '!', 'x'.repeat(50_000)]) {
      const t0 = process.hrtime.bigint();
      evaluate(f, { s: input });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      expect(ms).toBeLessThan(500);
    }
    expect(evaluate(compileFilter('s.IsMatch("^(a+)+$")'), { s: 'a'.repeat(100_000) })).toBe(true);
  });
});

describe('refused at compile time, with a column and a reason', () => {
  it.each([
    ['sender = "x"', 8, /assignment is not allowed/],
    ['sender === "x"', 8, /use == instead of ===/],
    ['sender !== "x"', 8, /use != instead of !==/],
    ['a + "x" == b', 3, /arithmetic/],
    ['a < b', 3, /only == and != compare/],
    ['a ? b : c', 3, /conditional/],
    ['a[0] == "x"', 2, /indexing/],
    ['a["constructor"]', 2, /indexing/],
    ['a?.b', 2, /optional chaining/],
    ['a & b', 3, /use && for "and"/],
    ['a | b', 3, /use \|\| for "or"/],
    ['a ?? b', 3, /use \|\| instead of \?\?/],
    ['a; b', 2, /single expression/],
    ['`x` == a', 1, /template strings/],
    ['() => 1', 4, /functions are not allowed/],
    ['{}', 1, /objects and blocks/],
    ['-a', 1, /arithmetic/],
    ['~a', 1, /bit operators/],
    ['a.b == "x"', 3, /property access \("\.b"\)/],
    ['a.constructor.name == "x"', 3, /property access/],
    ['a.length == 3', 3, /property access/],
    ['foo("x")', 1, /calling "foo" is not allowed/],
    ['eval("1")', 1, /calling "eval"/],
    ['a.Foo("x")', 3, /unknown method "Foo"/],
    ['a.startswith("x")', 3, /unknown method "startswith"/],
    ['a.StartsWith', 3, /is a method: call it/],
    ['a.StartsWith()', 3, /takes one argument, not 0/],
    ['a.ToLower("x") == "y"', 3, /takes no argument, not 1/],
    ['a.StartsWith(1)', 14, /needs a string argument, not a number/],
    ['a.StartsWith(true)', 14, /needs a string argument, not a boolean/],
    ['(1).StartsWith("x")', 5, /needs a string, not a number/],
    ['a.IsMatch(b)', 11, /string literal/],
    ['a.IsMatch("(")', 11, /invalid regular expression/],
    ['a.IsMatch("(?<=x)y")', 11, /invalid regular expression/],
    ['a.IsMatch("(a)\\\\1")', 11, /invalid regular expression/],
    ['this == "x"', 1, /"this" is not supported/],
    ['null == a', 1, /null is not supported/],
    ['a == null', 6, /null is not supported/],
    ['"x"', 1, /must be a condition/],
    ['a.ToLower()', 1, /must be a condition/],
    ['3', 1, /must be a condition/],
    ['"a" && b', 5, /"&&" needs conditions/],
    ['b || 3', 3, /"\|\|" needs conditions/],
    ['!"a"', 2, /"!" needs a condition/],
    ['true == "x"', 6, /compares a boolean with a string/],
    ['a b', 3, /expected an operator/],
    ['a == "x" b == "y"', 10, /expected an operator/],
    ['a, b', 4, /expected an operator/],
    ['(a == "x"', 10, /Unclosed \(/],
    ['a == ', 6, /Expected expression after ==/],
    ['a == "x', 6, /unclosed string literal/],
    ['a == "x\ny"', 8, /line break inside a string/],
    ['0x10 == a', 1, /invalid number/],
    ['1a == b', 1, /invalid number/],
    ['sénder == "x"', 2, /unexpected character "é"/],
    ['a == "x" \u0000', 10, /unexpected character U\+0000/],
    ['', 1, /empty/],
    ['   ', 1, /empty/],
  ])('%j → column %i', (text, column, reason) => {
    const e = compileError(text);
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(new RegExp(`^Invalid filter at column ${column}: `));
    expect(e.message).toMatch(reason);
    expect(e.details).toMatchObject({ column });
  });

  it('refuses a non-string', () => {
    expect(compileError(undefined as unknown as string).message).toMatch(/must be a string/);
  });
});

describe('bounded work', () => {
  it('caps the text length', () => {
    const long = 'a == "' + 'x'.repeat(FILTER_LIMITS.maxLength) + '"';
    expect(compileError(long).message).toMatch(/longer than 2000 characters/);
  });

  it('caps the node count', () => {
    const many = Array.from({ length: 120 }, (_, i) => `v${i} == "x"`).join(' || ');
    expect(many.length).toBeLessThan(FILTER_LIMITS.maxLength);
    expect(compileError(many).message).toMatch(/more than 200 operands and operators/);
    const fits = Array.from({ length: 50 }, (_, i) => `v${i} == "x"`).join(' || ');
    expect(compileFilter(fits).nodeCount).toBe(50 * 3 + 49);
  });

  it('bounds nesting through the node and token caps', () => {
    const deep = '('.repeat(150) + 'a == "x"' + ')'.repeat(150);
    expect(compileFilter(deep).nodeCount).toBe(3); // parentheses add no nodes
    expect(compileFilter('!'.repeat(150) + 'a').nodeCount).toBe(151);
    expect(compileError('!'.repeat(250) + 'a').message).toMatch(/more than 200 operands/);
    expect(compileError('('.repeat(700) + 'a' + ')'.repeat(700)).message).toMatch(/more than 200 operands/);
  });

  it('caps the regex length and the RE2 program size', () => {
    expect(compileError(`a.IsMatch("${'x'.repeat(257)}")`).message).toMatch(/longer than 256 characters/);
    expect(compileFilter(`a.IsMatch("${'x'.repeat(256)}")`).nodeCount).toBe(3);
    expect(compileError('a.IsMatch("x{1000}y{1000}z{1000}w{1000}v{1000}")').message).toMatch(/too large/);
    expect(compileError('a.IsMatch("(ab){1001}")').message).toMatch(/invalid regular expression/);
  });

  it('evaluates a maximal filter over large values quickly', () => {
    const parts = Array.from({ length: 40 }, (_, i) => `v${i % 5}.ToLower().Contains("needle${i}")`);
    const f = compileFilter(parts.join(' || '));
    const big = 'y'.repeat(200_000);
    const t0 = Date.now();
    expect(evaluate(f, { v0: big, v1: big, v2: big, v3: big, v4: big })).toBe(false);
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});

describe('compiled filters', () => {
  it('are frozen and reusable', () => {
    const f = compileFilter('a == "x"');
    expect(Object.isFrozen(f)).toBe(true);
    expect(f.source).toBe('a == "x"');
    expect(evaluate(f, { a: 'x' })).toBe(true);
    expect(evaluate(f, { a: 'y' })).toBe(false);
    expect(evaluate(f, { a: 'x' })).toBe(true);
  });

  it('the implementation executes no user text', () => {
    const dir = join(__dirname, '../../../src/webhooks/filter');
    for (const file of readdirSync(dir)) {
      const code = readFileSync(join(dir, file), 'utf8');
      expect(code).not.toMatch(/\beval\s*\(|new\s+Function|\bFunction\s*\(|['"](node:)?vm['"]|new\s+RegExp/);
    }
  });
});

const event: GatewayEvent = {
  id: 'e1',
  topic: 'InvoiceReceived',
  partyId: 'NL:0106:1',
  documentId: 'doc-1',
  message: 'received',
  details: { id: 'inv-1', sender: '0106:123', createdBy: 'peppol', documentTypeId: 'urn:x', topic: 'shadowed' },
  createdBy: 'peppol',
  createdOn: '2026-03-01T12:00:00+01:00',
};

describe('filterVariables', () => {
  it('flattens details and top-level fields, top level winning', () => {
    const vars = filterVariables(event);
    expect(vars).toEqual(
      Object.assign(Object.create(null), {
        id: 'inv-1',
        sender: '0106:123',
        createdBy: 'peppol',
        documentTypeId: 'urn:x',
        topic: 'InvoiceReceived',
        partyId: 'NL:0106:1',
        documentId: 'doc-1',
        message: 'received',
        createdOn: '2026-03-01T12:00:00+01:00',
      }),
    );
    expect('refToDocumentId' in vars).toBe(false);
    expect(Object.getPrototypeOf(vars)).toBeNull();
  });
});

describe('createFilterPredicate with selectHooks', () => {
  const hook = (id: string, filter: string | null, partyId: string | null = null): HookForRouting => ({
    id,
    action: 'https',
    isActive: true,
    topic: 'InvoiceReceived',
    partyId,
    filter,
  });

  it('routes by filter', () => {
    const passesFilter = createFilterPredicate();
    const hooks = [
      hook('p', 'sender == "0106:999"', 'NL:0106:1'),
      hook('q', 'sender.StartsWith("0106:") && topic == "InvoiceReceived"'),
    ];
    expect(selectHooks(event, hooks, { passesFilter }).selected.map((h) => h.id)).toEqual(['q']);
    expect(
      selectHooks({ ...event, details: { sender: '0106:999' } }, hooks, { passesFilter }).selected.map((h) => h.id),
    ).toEqual(['p']);
  });

  it('treats an empty filter as no filter and a filter that no longer compiles as no match', () => {
    const passesFilter = createFilterPredicate();
    expect(passesFilter(hook('a', ''), event)).toBe(true);
    expect(passesFilter(hook('a', null), event)).toBe(true);
    expect(passesFilter(hook('a', 'sender = "x"'), event)).toBe(false);
    expect(passesFilter(hook('a', 'sender = "x"'), event)).toBe(false);
  });

  it('keeps its cache bounded', () => {
    const passesFilter = createFilterPredicate(2);
    for (let i = 0; i < 10; i++) expect(passesFilter(hook('a', `sender == "${i}"`), event)).toBe(false);
    expect(passesFilter(hook('a', 'sender == "0106:123"'), event)).toBe(true);
  });
});
