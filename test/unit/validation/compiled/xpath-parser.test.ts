import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOMParser, type Element } from '@xmldom/xmldom';
import {
  FN_NS,
  Unsupported,
  XPathError,
  XS_NS,
  type Expr,
  type NamespaceResolver,
  type Step,
} from '../../../../src/validation/compiled/model';
import { installXmldomRegexCache } from '../../../../src/formats/xml/xmldom-regex-cache';
import { resolverOf } from '../../../../src/validation/compiled/program';
import { parsePattern, parseSequenceType, parseXPath } from '../../../../src/validation/compiled/xpath-parser';
import { RULES_DIR } from '../support';

const PREFIXES: Record<string, string> = { xs: XS_NS, p: 'urn:p', cbc: 'urn:cbc', cac: 'urn:cac' };
const ns: NamespaceResolver = (prefix) => PREFIXES[prefix];
const x = (text: string): Expr => parseXPath(text, ns);

// Small builders for the expected trees.
const int = (v: string): Expr => ({ k: 'integer', v });
const child = (local: string, preds: Expr[] = [], uri = ''): Step => ({
  k: 'axis',
  axis: 'child',
  test: { k: 'name', ns: uri, local },
  preds,
});
const rel = (...steps: Step[]): Expr => ({ k: 'path', root: 'none', steps });
const name = (local: string): Expr => rel(child(local));
const v = (local: string, uri = ''): Expr => ({ k: 'var', name: { ns: uri, local } });
const call = (local: string, ...args: Expr[]): Expr => ({ k: 'call', fn: { ns: FN_NS, local }, args });
const STAR: Step = { k: 'axis', axis: 'child', test: { k: 'name', ns: '*', local: '*' }, preds: [] };
const DOS: Step = { k: 'axis', axis: 'descendant-or-self', test: { k: 'kind', kind: 'node' }, preds: [] };

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof XPathError) return e.code;
    if (e instanceof Unsupported) return 'Unsupported';
    throw e;
  }
  return 'no error';
}

describe('parseXPath: precedence and associativity', () => {
  test('multiplicative binds tighter than additive; both associate to the left', () => {
    expect(x('1 + 2 * 3')).toEqual({
      k: 'arith',
      op: '+',
      l: int('1'),
      r: { k: 'arith', op: '*', l: int('2'), r: int('3') },
    });
    expect(x('1 - 2 - 3')).toEqual({
      k: 'arith',
      op: '-',
      l: { k: 'arith', op: '-', l: int('1'), r: int('2') },
      r: int('3'),
    });
    expect(x('8 div 4 idiv 2 mod 3')).toEqual({
      k: 'arith',
      op: 'mod',
      l: { k: 'arith', op: 'idiv', l: { k: 'arith', op: 'div', l: int('8'), r: int('4') }, r: int('2') },
      r: int('3'),
    });
  });

  test('or < and < comparison < range < additive', () => {
    expect(x('a or b and c')).toEqual({ k: 'or', l: name('a'), r: { k: 'and', l: name('b'), r: name('c') } });
    expect(x('a = 1 and b != 2')).toEqual({
      k: 'and',
      l: { k: 'gcmp', op: '=', l: name('a'), r: int('1') },
      r: { k: 'gcmp', op: '!=', l: name('b'), r: int('2') },
    });
    expect(x('1 to 2 + 3')).toEqual({
      k: 'range',
      l: int('1'),
      r: { k: 'arith', op: '+', l: int('2'), r: int('3') },
    });
    expect(x('$a eq 1 + 1')).toEqual({
      k: 'vcmp',
      op: 'eq',
      l: v('a'),
      r: { k: 'arith', op: '+', l: int('1'), r: int('1') },
    });
    expect(x('a is b')).toEqual({ k: 'ncmp', op: 'is', l: name('a'), r: name('b') });
    expect(x('a << b')).toEqual({ k: 'ncmp', op: '<<', l: name('a'), r: name('b') });
    expect(x('a >> b')).toEqual({ k: 'ncmp', op: '>>', l: name('a'), r: name('b') });
    expect(x('1 <= 2')).toEqual({ k: 'gcmp', op: '<=', l: int('1'), r: int('2') });
    for (const op of ['ne', 'lt', 'le', 'gt', 'ge']) expect(x(`1 ${op} 2`)).toMatchObject({ k: 'vcmp', op });
  });

  test('union < intersect/except < instance of < treat < castable < cast < unary', () => {
    expect(x('a * b | c')).toEqual({
      k: 'arith',
      op: '*',
      l: name('a'),
      r: { k: 'union', l: name('b'), r: name('c') },
    });
    expect(x('a | b intersect c union d')).toEqual({
      k: 'union',
      l: { k: 'union', l: name('a'), r: { k: 'intersect', l: name('b'), r: name('c') } },
      r: name('d'),
    });
    expect(x('a except b intersect c')).toEqual({
      k: 'intersect',
      l: { k: 'except', l: name('a'), r: name('b') },
      r: name('c'),
    });
    expect(x('-$x cast as xs:string')).toEqual({
      k: 'cast',
      e: { k: 'neg', e: v('x') },
      type: { ns: XS_NS, local: 'string' },
      optional: false,
    });
    expect(x('$x cast as xs:decimal? castable as xs:integer')).toEqual({
      k: 'castable',
      e: { k: 'cast', e: v('x'), type: { ns: XS_NS, local: 'decimal' }, optional: true },
      type: { ns: XS_NS, local: 'integer' },
      optional: false,
    });
    expect(x('$x treat as xs:integer instance of xs:integer+')).toEqual({
      k: 'instanceOf',
      e: {
        k: 'treatAs',
        e: v('x'),
        type: { k: 'item', item: { k: 'atomic', type: { ns: XS_NS, local: 'integer' } }, occ: '' },
      },
      type: { k: 'item', item: { k: 'atomic', type: { ns: XS_NS, local: 'integer' } }, occ: '+' },
    });
    expect(x('- - + 1')).toEqual({ k: 'neg', e: { k: 'neg', e: { k: 'plus', e: int('1') } } });
    expect(x('1 - -1')).toEqual({ k: 'arith', op: '-', l: int('1'), r: { k: 'neg', e: int('1') } });
  });

  test('the comma is lowest; for, some, every and if are single expressions', () => {
    expect(x('1, 2 + 3')).toEqual({
      k: 'seq',
      items: [int('1'), { k: 'arith', op: '+', l: int('2'), r: int('3') }],
    });
    expect(x('for $a in x, $p:b in y return $a + $p:b')).toEqual({
      k: 'for',
      bindings: [
        { name: { ns: '', local: 'a' }, in: name('x') },
        { name: { ns: 'urn:p', local: 'b' }, in: name('y') },
      ],
      ret: { k: 'arith', op: '+', l: v('a'), r: v('b', 'urn:p') },
    });
    expect(x('some $i in (1, 2) satisfies $i = 2')).toEqual({
      k: 'some',
      bindings: [{ name: { ns: '', local: 'i' }, in: { k: 'seq', items: [int('1'), int('2')] } }],
      sat: { k: 'gcmp', op: '=', l: v('i'), r: int('2') },
    });
    expect(x('every $i in a satisfies $i')).toMatchObject({ k: 'every' });
    expect(x('if (a) then 1 else if (b) then 2 else 3')).toEqual({
      k: 'if',
      c: name('a'),
      t: int('1'),
      e: { k: 'if', c: name('b'), t: int('2'), e: int('3') },
    });
    // The for's return clause extends as far as an ExprSingle goes.
    expect(x('for $a in x return $a, 1')).toMatchObject({ k: 'seq', items: [{ k: 'for' }, int('1')] });
  });

  test('comparisons and ranges do not chain', () => {
    expect(codeOf(() => x('a = b = c'))).toBe('XPST0003');
    expect(codeOf(() => x('1 eq 1 eq 1'))).toBe('XPST0003');
    expect(codeOf(() => x('1 to 2 to 3'))).toBe('XPST0003');
    expect(x('(a = b) = c')).toMatchObject({ k: 'gcmp', l: { k: 'gcmp' } });
  });
});

describe('parseXPath: paths', () => {
  test.each([
    'child',
    'descendant',
    'attribute',
    'self',
    'descendant-or-self',
    'following-sibling',
    'following',
    'parent',
    'ancestor',
    'preceding-sibling',
    'preceding',
    'ancestor-or-self',
  ])('the %s axis', (axis) => {
    expect(x(`${axis}::node()`)).toEqual(
      rel({ k: 'axis', axis, test: { k: 'kind', kind: 'node' }, preds: [] } as Step),
    );
    expect(x(`${axis} :: p:x`)).toEqual(
      rel({ k: 'axis', axis, test: { k: 'name', ns: 'urn:p', local: 'x' }, preds: [] } as Step),
    );
  });

  test('the namespace axis is not modelled; an unknown axis is a syntax error', () => {
    expect(codeOf(() => x('namespace::*'))).toBe('Unsupported');
    expect(codeOf(() => x('sideways::a'))).toBe('XPST0003');
  });

  test('abbreviations: @, .., ., //, leading / and //, / alone', () => {
    expect(x('@id')).toEqual(
      rel({ k: 'axis', axis: 'attribute', test: { k: 'name', ns: '', local: 'id' }, preds: [] }),
    );
    expect(x('..')).toEqual(rel({ k: 'axis', axis: 'parent', test: { k: 'kind', kind: 'node' }, preds: [] }));
    expect(x('.')).toEqual({ k: 'context' });
    expect(x('./a')).toEqual(rel({ k: 'filter', expr: { k: 'context' }, preds: [] }, child('a')));
    expect(x('a//b')).toEqual(rel(child('a'), DOS, child('b')));
    expect(x('//b')).toEqual({ k: 'path', root: 'rootDescendant', steps: [DOS, child('b')] });
    expect(x('/a/b')).toEqual({ k: 'path', root: 'root', steps: [child('a'), child('b')] });
    expect(x('/')).toEqual({ k: 'path', root: 'root', steps: [] });
    expect(x('count(/)')).toEqual(call('count', { k: 'path', root: 'root', steps: [] }));
    expect(x('/ = 1')).toMatchObject({ k: 'gcmp', l: { k: 'path', root: 'root', steps: [] } });
    // `/ *` is the root's element children, so a trailing operand is an error (leading-lone-slash).
    expect(x('/ *')).toEqual({
      k: 'path',
      root: 'root',
      steps: [STAR],
    });
    expect(codeOf(() => x('/ * 5'))).toBe('XPST0003');
  });

  test('predicates and filter expressions as steps', () => {
    expect(x('a[1][@b]')).toEqual(
      rel(
        child('a', [
          int('1'),
          rel({ k: 'axis', axis: 'attribute', test: { k: 'name', ns: '', local: 'b' }, preds: [] }),
        ]),
      ),
    );
    expect(x('$x[1]')).toEqual(rel({ k: 'filter', expr: v('x'), preds: [int('1')] }));
    expect(x('(a | b)[last()]/c')).toEqual(
      rel({ k: 'filter', expr: { k: 'union', l: name('a'), r: name('b') }, preds: [call('last')] }, child('c')),
    );
    expect(x('a/f(.)')).toEqual(rel(child('a'), { k: 'filter', expr: call('f', { k: 'context' }), preds: [] }));
    expect(x('cac:X/xs:decimal(.)')).toEqual(
      rel(child('X', [], 'urn:cac'), {
        k: 'filter',
        expr: { k: 'call', fn: { ns: XS_NS, local: 'decimal' }, args: [{ k: 'context' }] },
        preds: [],
      }),
    );
    expect(x('()')).toEqual({ k: 'seq', items: [] });
    expect(x('(1)')).toEqual(int('1'));
  });

  test('name tests: prefixes and wildcards; unprefixed names are in no namespace', () => {
    const test = (e: Expr): unknown => (e.k === 'path' && e.steps[0]?.k === 'axis' ? e.steps[0].test : undefined);
    expect(test(x('*'))).toEqual({ k: 'name', ns: '*', local: '*' });
    expect(test(x('p:*'))).toEqual({ k: 'name', ns: 'urn:p', local: '*' });
    expect(test(x('*:l'))).toEqual({ k: 'name', ns: '*', local: 'l' });
    expect(test(x('cbc:ID'))).toEqual({ k: 'name', ns: 'urn:cbc', local: 'ID' });
    expect(test(x('ID'))).toEqual({ k: 'name', ns: '', local: 'ID' });
    expect(test(x('@*'))).toEqual({ k: 'name', ns: '*', local: '*' });
    expect(test(x('@p:a'))).toEqual({ k: 'name', ns: 'urn:p', local: 'a' });
  });

  test('kind tests', () => {
    const step = (e: Expr): unknown => (e.k === 'path' ? e.steps[0] : undefined);
    expect(x('text()')).toEqual(rel({ k: 'axis', axis: 'child', test: { k: 'kind', kind: 'text' }, preds: [] }));
    expect(step(x('comment()'))).toMatchObject({ test: { kind: 'comment' } });
    expect(step(x("processing-instruction('x')"))).toMatchObject({
      test: { kind: 'pi', name: { ns: '', local: 'x' } },
    });
    expect(step(x('processing-instruction(x)'))).toMatchObject({ test: { kind: 'pi', name: { local: 'x' } } });
    expect(step(x('processing-instruction()'))).toEqual({
      k: 'axis',
      axis: 'child',
      test: { k: 'kind', kind: 'pi' },
      preds: [],
    });
    expect(step(x('element()'))).toMatchObject({ axis: 'child', test: { kind: 'element' } });
    expect(step(x('element(cbc:ID)'))).toMatchObject({
      test: { kind: 'element', name: { ns: 'urn:cbc', local: 'ID' } },
    });
    expect(step(x('element(*)'))).toMatchObject({ test: { kind: 'element', name: '*' } });
    // An attribute() test in an abbreviated step selects along the attribute axis.
    expect(step(x('attribute(*)'))).toMatchObject({ axis: 'attribute', test: { kind: 'attribute', name: '*' } });
    expect(step(x('document-node()'))).toMatchObject({ test: { kind: 'document' } });
    expect(step(x('self::node()'))).toMatchObject({ axis: 'self', test: { kind: 'node' } });
    expect(codeOf(() => x('schema-element(a)'))).toBe('Unsupported');
    expect(codeOf(() => x('element(a, xs:string)'))).toBe('Unsupported');
    expect(codeOf(() => x('document-node(element(a))'))).toBe('Unsupported');
  });
});

describe('parseXPath: keywords are not reserved', () => {
  test('operator keywords as element and attribute names', () => {
    expect(x('child::div')).toEqual(name('div'));
    expect(x('@and')).toEqual(
      rel({ k: 'axis', axis: 'attribute', test: { k: 'name', ns: '', local: 'and' }, preds: [] }),
    );
    expect(x('/or')).toEqual({ k: 'path', root: 'root', steps: [child('or')] });
    expect(x('div div div')).toEqual({ k: 'arith', op: 'div', l: name('div'), r: name('div') });
    expect(x('mod mod mod')).toEqual({ k: 'arith', op: 'mod', l: name('mod'), r: name('mod') });
    expect(x('and and and')).toEqual({ k: 'and', l: name('and'), r: name('and') });
    expect(x('to to to')).toEqual({ k: 'range', l: name('to'), r: name('to') });
    expect(x('* * *')).toEqual({
      k: 'arith',
      op: '*',
      l: rel(STAR),
      r: rel(STAR),
    });
    expect(x('union | except')).toEqual({ k: 'union', l: name('union'), r: name('except') });
  });

  test('for, if, some, return, then as names where no keyword can stand', () => {
    expect(x('for/if')).toEqual(rel(child('for'), child('if')));
    expect(x('some = every')).toEqual({ k: 'gcmp', op: '=', l: name('some'), r: name('every') });
    expect(x('for $for in for return $for')).toEqual({
      k: 'for',
      bindings: [{ name: { ns: '', local: 'for' }, in: name('for') }],
      ret: v('for'),
    });
    expect(x('if (then) then else else if')).toEqual({ k: 'if', c: name('then'), t: name('else'), e: name('if') });
    expect(x('instance instance of element()')).toMatchObject({ k: 'instanceOf', e: name('instance') });
  });

  test('a name followed by ( is a call, except kind tests and if', () => {
    expect(x('count (: note :) (a)')).toEqual(call('count', name('a')));
    expect(x('p:f()')).toEqual({ k: 'call', fn: { ns: 'urn:p', local: 'f' }, args: [] });
    expect(x('concat(a, "b", 1)')).toEqual(call('concat', name('a'), { k: 'string', v: 'b' }, int('1')));
    expect(codeOf(() => x('item()'))).toBe('XPST0003');
    expect(codeOf(() => x('1 + if (a)'))).toBe('XPST0003');
  });

  test('hyphens belong to names; a spaced minus is an operator', () => {
    expect(x('a-b')).toEqual(name('a-b'));
    expect(x('a - b')).toEqual({ k: 'arith', op: '-', l: name('a'), r: name('b') });
    expect(x('$x -1')).toEqual({ k: 'arith', op: '-', l: v('x'), r: int('1') });
    expect(x('$x-1')).toEqual(v('x-1'));
    expect(x('a[1]-b')).toMatchObject({ k: 'arith', op: '-' });
  });
});

describe('parseXPath: literals, variables and comments', () => {
  test('string literals with doubled-quote escapes', () => {
    expect(x("'it''s'")).toEqual({ k: 'string', v: "it's" });
    expect(x('"say ""hi"""')).toEqual({ k: 'string', v: 'say "hi"' });
    expect(x(`'(: not a comment :)'`)).toEqual({ k: 'string', v: '(: not a comment :)' });
    expect(x('""')).toEqual({ k: 'string', v: '' });
  });

  test('numeric literals keep their lexical form', () => {
    expect(x('007')).toEqual({ k: 'integer', v: '007' });
    expect(x('1.50')).toEqual({ k: 'decimal', v: '1.50' });
    expect(x('.5')).toEqual({ k: 'decimal', v: '.5' });
    expect(x('5.')).toEqual({ k: 'decimal', v: '5.' });
    expect(x('1e3')).toEqual({ k: 'double', v: '1e3' });
    expect(x('1.5E-2')).toEqual({ k: 'double', v: '1.5E-2' });
    expect(codeOf(() => x('10div 3'))).toBe('XPST0003');
  });

  test('variables: unprefixed in no namespace, prefixed resolved, space after $ allowed', () => {
    expect(x('$x')).toEqual(v('x'));
    expect(x('$ p:x')).toEqual(v('x', 'urn:p'));
  });

  test('comments nest and may stand between any tokens', () => {
    expect(x('1 (: one (: two :) still :) + (::) 2')).toEqual({ k: 'arith', op: '+', l: int('1'), r: int('2') });
    expect(x('a(: c :)/b')).toEqual(rel(child('a'), child('b')));
  });
});

describe('parseXPath: errors', () => {
  test('syntax errors are XPST0003 with the position', () => {
    const err = (() => {
      try {
        x('1 +');
      } catch (e) {
        return e as XPathError;
      }
      return undefined;
    })();
    expect(err?.code).toBe('XPST0003');
    expect(err?.message).toContain('offset 3');
    for (const bad of [
      '',
      '   ',
      '1 2',
      "'abc",
      '(: open',
      'a[1',
      'f(a,)',
      'if (a) then b',
      'for $a in b',
      '@',
      '$',
      'a/',
      '1 = ',
    ]) {
      expect([bad, codeOf(() => x(bad))]).toEqual([bad, 'XPST0003']);
    }
  });

  test('an undeclared prefix is XPST0081', () => {
    expect(codeOf(() => x('u:a'))).toBe('XPST0081');
    expect(codeOf(() => x('$u:a'))).toBe('XPST0081');
    expect(codeOf(() => x('u:f()'))).toBe('XPST0081');
    expect(codeOf(() => x('u:*'))).toBe('XPST0081');
    expect(codeOf(() => x('. cast as u:t'))).toBe('XPST0081');
  });
});

describe('parseSequenceType', () => {
  const st = (t: string): unknown => parseSequenceType(t, ns);
  test('atomic types, item(), kind tests, occurrences, empty-sequence()', () => {
    expect(st('xs:decimal')).toEqual({
      k: 'item',
      item: { k: 'atomic', type: { ns: XS_NS, local: 'decimal' } },
      occ: '',
    });
    expect(st('xs:string?')).toEqual({
      k: 'item',
      item: { k: 'atomic', type: { ns: XS_NS, local: 'string' } },
      occ: '?',
    });
    expect(st('xs:boolean')).toMatchObject({ item: { type: { local: 'boolean' } }, occ: '' });
    expect(st('element()*')).toEqual({ k: 'item', item: { k: 'kind', kind: 'element' }, occ: '*' });
    expect(st('item()*')).toEqual({ k: 'item', item: { k: 'anyItem' }, occ: '*' });
    expect(st('node()+')).toEqual({ k: 'item', item: { k: 'kind', kind: 'node' }, occ: '+' });
    expect(st('empty-sequence()')).toEqual({ k: 'empty' });
    expect(codeOf(() => st('xs:string??'))).toBe('XPST0003');
    expect(codeOf(() => st('u:t'))).toBe('XPST0081');
  });
});

describe('parsePattern', () => {
  const pat = (t: string): Expr => parsePattern(t, ns);
  test('paths, roots, unions, predicates', () => {
    expect(pat('cac:A/cbc:B')).toEqual(rel(child('A', [], 'urn:cac'), child('B', [], 'urn:cbc')));
    expect(pat('/')).toEqual({ k: 'path', root: 'root', steps: [] });
    expect(pat('//a')).toEqual({ k: 'path', root: 'rootDescendant', steps: [DOS, child('a')] });
    expect(pat('a//b')).toEqual(rel(child('a'), DOS, child('b')));
    expect(pat('@*|node()')).toEqual({
      k: 'union',
      l: rel({ k: 'axis', axis: 'attribute', test: { k: 'name', ns: '*', local: '*' }, preds: [] }),
      r: rel({ k: 'axis', axis: 'child', test: { k: 'kind', kind: 'node' }, preds: [] }),
    });
    expect(pat('text()')).toEqual(rel({ k: 'axis', axis: 'child', test: { k: 'kind', kind: 'text' }, preds: [] }));
    expect(pat('a[b = 1][2] | /c union d')).toMatchObject({
      k: 'union',
      l: { k: 'union', l: { root: 'none' }, r: { root: 'root' } },
      r: { root: 'none' },
    });
    expect(pat('child::a/attribute::b')).toEqual(
      rel(child('a'), { k: 'axis', axis: 'attribute', test: { k: 'name', ns: '', local: 'b' }, preds: [] }),
    );
  });

  test('a parenthesized pattern is a filter step over the inner pattern', () => {
    expect(pat('(/a | /b)[$x]/c')).toEqual(
      rel(
        {
          k: 'filter',
          expr: {
            k: 'union',
            l: { k: 'path', root: 'root', steps: [child('a')] },
            r: { k: 'path', root: 'root', steps: [child('b')] },
          },
          preds: [v('x')],
        },
        child('c'),
      ),
    );
    expect(pat('(a)')).toEqual(name('a'));
  });

  test('other axes and function heads are refused', () => {
    expect(codeOf(() => pat('ancestor::a'))).toBe('XPST0003');
    expect(codeOf(() => pat('a/..'))).toBe('XPST0003');
    expect(codeOf(() => pat('f(a)'))).toBe('XPST0003');
    expect(codeOf(() => pat("key('k', 1)"))).toBe('Unsupported');
    expect(codeOf(() => pat("id('a')/b"))).toBe('Unsupported');
    expect(codeOf(() => pat(''))).toBe('XPST0003');
    expect(codeOf(() => pat('u:a'))).toBe('XPST0081');
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// Corpus: every expression of every cached Schematron XSLT parses.

function xsltFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    // _jars and _network hold the reference engine and code lists, not rule stylesheets.
    if (e.isDirectory()) {
      if (!e.name.startsWith('_')) xsltFiles(p, out);
    } else if (e.name.endsWith('.xslt')) out.push(p);
  }
  return out;
}

describe('corpus: every test, select, match and as attribute in the cached rule packs', () => {
  const files = xsltFiles(RULES_DIR);
  beforeAll(() => installXmldomRegexCache());

  test('the rule cache holds the Schematron packs (npm run rules:fetch)', () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
  });

  test.each(files.map((f) => [f.slice(RULES_DIR.length + 1), f]))('%s', (_label, file) => {
    const doc = new DOMParser().parseFromString(readFileSync(file, 'utf8'), 'text/xml');
    const all = doc.getElementsByTagNameNS('http://www.w3.org/1999/XSL/Transform', '*');
    const failures: string[] = [];
    let count = 0;
    for (let i = 0; i < all.length; i++) {
      const el = all.item(i) as Element;
      for (const attr of ['test', 'select', 'match', 'as']) {
        const text = el.getAttribute(attr);
        if (text === null) continue;
        count++;
        try {
          if (attr === 'match') parsePattern(text, resolverOf(el));
          else if (attr === 'as') parseSequenceType(text, resolverOf(el));
          else parseXPath(text, resolverOf(el));
        } catch (e) {
          failures.push(`${el.localName}/@${attr}="${text}": ${(e as Error).message}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(count).toBeGreaterThan(50);
  });
});
