import { parseXmlForReading } from '../../../../src/formats';
import { CompileUnit, Scope, compileExpr, type RunState } from '../../../../src/validation/compiled/evaluate';
import { buildXdmTree } from '../../../../src/validation/compiled';
import { parseXPath } from '../../../../src/validation/compiled/xpath-parser';
import { ours, saxon } from './differential';

// Quantified and for expressions over several bindings (the EUSR and TSR packs' key rules use two), against SaxonJS.

const EXPRESSIONS = [
  'every $a in (1, 2), $b in (3, 4) satisfies $a < $b',
  'every $a in (1, 2), $b in (3, 4) satisfies $a + $b = 5',
  'every $a in (1, 2), $b in (2, 3) satisfies $a < $b',
  'some $a in (1, 2), $b in (3, 4) satisfies $a + $b = 6',
  'some $a in (1, 2), $b in (3, 4) satisfies $a + $b = 9',
  'every $a in (), $b in (1) satisfies false()',
  'every $a in (1), $b in () satisfies false()',
  'some $a in (1), $b in () satisfies true()',
  'every $a in (1, 2), $b in (1, 2), $c in (1, 2) satisfies $a + $b + $c < 6',
  'every $a in (1, 2), $b in (1, 2), $c in (1, 2) satisfies $a + $b + $c <= 6',
  'some $a in (1, 2), $b in (1, 2), $c in (1, 2) satisfies $a + $b + $c = 6',
  'some $a in (1, 2), $b in (1, 2), $c in (1, 2) satisfies $a + $b + $c = 7',
  'every $a in (1, 2), $b in ($a, 3) satisfies $b >= $a',
  'for $a in (1, 2), $b in (10, 20) return $a + $b',
];

it.each(EXPRESSIONS)('%s', (text) => {
  const unit = new CompileUnit();
  const scope = new Scope(unit);
  const f = compileExpr(
    parseXPath(text, () => undefined),
    scope,
  );
  const doc = buildXdmTree(parseXmlForReading('<a/>'));
  const run: RunState = { doc, globals: [], memo: new Array(unit.memoSlots), globalEvaluators: [], keys: [] };
  const got = ours(() => f({ item: doc, pos: 1, size: 1, current: doc, doc, vars: new Array(scope.frameSize), run }));
  expect(got).toEqual(saxon(text));
});
