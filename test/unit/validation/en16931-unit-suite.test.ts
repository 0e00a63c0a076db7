import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { XMLSerializer, type Element } from '@xmldom/xmldom';
import { parseXml } from '../../../src/formats';
import { CORPUS_DIR } from '../../support/corpus';
import { requirePacks, validator } from './support';

// Packs load on first use (a SEF of several MB) and a machine under load validates slower.
jest.setTimeout(180_000);

/**
 * The official EN 16931 conformance suite (ConnectingEurope/eInvoicing-EN16931 `test/`, VEFA testSet files), run
 * through our validate path: every <test> says which rule must fire as error or warning, or must not fire. The test
 * documents are rule-focused fragments, not schema-valid invoices, so they are validated with the Schematron pack
 * alone (`ruleSet`), the way the suite's own runner applies it.
 */

const VEFA = 'http://difi.no/xsd/vefa/validator/1.0';
const SUITE = path.join(CORPUS_DIR, 'en16931', 'unit-tests');

interface Expectation {
  kind: 'error' | 'warning' | 'success';
  rule: string;
  /** For `error number="n"`: how often the rule must fire. */
  count?: number;
}

interface Case {
  description: string;
  expectations: Expectation[];
  document: string;
  root: string;
}

function children(el: Element, ns: string | null, local?: string): Element[] {
  const out: Element[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType !== 1) continue;
    const e = c as Element;
    if ((ns === null || e.namespaceURI === ns) && (local === undefined || e.localName === local)) out.push(e);
  }
  return out;
}

function readTestSet(file: string): Case[] {
  const doc = parseXml(readFileSync(file));
  const root = doc.documentElement!;
  const cases: Case[] = [];
  for (const test of children(root, VEFA, 'test')) {
    const assert = children(test, VEFA, 'assert')[0];
    const expectations: Expectation[] = [];
    let description = '';
    for (const e of assert ? children(assert, VEFA) : []) {
      if (e.localName === 'description') description = (e.textContent ?? '').trim();
      if (e.localName === 'error' || e.localName === 'warning' || e.localName === 'success') {
        const n = e.getAttribute('number');
        expectations.push({
          kind: e.localName,
          rule: (e.textContent ?? '').trim(),
          ...(n ? { count: Number(n) } : {}),
        });
      }
    }
    const body = children(test, null).find((e) => e.namespaceURI !== VEFA);
    if (!body) continue;
    cases.push({
      description,
      expectations,
      document: new XMLSerializer().serializeToString(body),
      root: body.localName ?? '',
    });
  }
  return cases;
}

const DIRS: Array<{ dir: string; sourceFormat: string; ruleSet: string }> = [
  { dir: 'Invoice-unit-UBL', sourceFormat: 'en16931-ubl-invoice', ruleSet: 'en16931-ubl' },
  { dir: 'CreditNote-unit-UBL', sourceFormat: 'en16931-ubl-creditnote', ruleSet: 'en16931-ubl' },
  { dir: 'cii', sourceFormat: 'en16931-cii', ruleSet: 'en16931-cii' },
];

const FILES = DIRS.flatMap((d) =>
  readdirSync(path.join(SUITE, d.dir))
    .filter((f) => f.endsWith('.xml'))
    .sort()
    .map((f) => ({ ...d, file: f })),
);

let expectationsChecked = 0;
let filesRun = 0;

describe('EN 16931 unit test suite (VEFA testSets) through validate()', () => {
  beforeAll(() => requirePacks(['en16931-ubl', 'en16931-cii']));
  afterAll(() => {
    // ~1,140 expectations in 279 files: a sanity floor so a parsing slip cannot empty the suite silently
    // (checked when the whole suite ran, not under a -t filter).
    if (filesRun === FILES.length) expect(expectationsChecked).toBeGreaterThan(1100);
  });

  it('finds the whole suite', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(279);
  });

  it.each(FILES)('$dir/$file', async ({ dir, file, sourceFormat, ruleSet }) => {
    filesRun++;
    const cases = readTestSet(path.join(SUITE, dir, file));
    expect(cases.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const c of cases) {
      // A few files of each UBL folder test the other document type.
      const format = sourceFormat.startsWith('en16931-ubl')
        ? `en16931-ubl-${c.root === 'CreditNote' ? 'creditnote' : 'invoice'}`
        : sourceFormat;
      const r = await validator().validate(Buffer.from(c.document), { sourceFormat: format, ruleSet });
      expect(r.ruleSets).toEqual([{ id: ruleSet, version: '1.3.16', outcome: expect.any(String) }]);
      for (const x of c.expectations) {
        expectationsChecked++;
        const fired = r.assertions.filter((a) => a.ruleId === x.rule);
        const ok =
          x.kind === 'success'
            ? fired.length === 0
            : fired.length > 0 &&
              fired.every((a) => a.flag === x.kind) &&
              (x.count === undefined || fired.length === x.count);
        if (!ok)
          failures.push(
            `${c.description || '(no description)'}: expected ${x.kind} ${x.rule}${x.count ? ` ×${x.count}` : ''}, ` +
              `got ${fired.map((a) => a.flag).join(',') || 'nothing'}`,
          );
      }
    }
    expect(failures).toEqual([]);
  });
});
