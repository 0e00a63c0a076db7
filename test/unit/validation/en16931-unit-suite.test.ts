import path from 'node:path';
import { CEN_SUITE_DIR, cenSuiteFiles, readCenTestSet } from '../../support/validation/cen-suite';
import { requirePacks, validator } from './support';

// Packs load on first use (a SEF of several MB) and a machine under load validates slower.
jest.setTimeout(180_000);

/**
 * The official EN 16931 conformance suite (ConnectingEurope/eInvoicing-EN16931 `test/`, VEFA testSet files), run
 * through our validate path: every <test> says which rule must fire as error or warning, or must not fire. The test
 * documents are rule-focused fragments, not schema-valid invoices, so they are validated with the Schematron pack
 * alone (`ruleSet`), the way the suite's own runner applies it.
 */

const FILES = cenSuiteFiles();

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
    const cases = readCenTestSet(path.join(CEN_SUITE_DIR, dir, file));
    expect(cases.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const c of cases) {
      // A few files of each UBL folder test the other document type.
      const format = sourceFormat.startsWith('en16931-ubl')
        ? `en16931-ubl-${c.root === 'CreditNote' ? 'creditnote' : 'invoice'}`
        : sourceFormat;
      const r = await validator().validate(Buffer.from(c.document), { sourceFormat: format, ruleSet });
      expect(r.ruleSets).toEqual([{ id: ruleSet, version: '1.3.16', outcome: expect.any(String), engine: 'compiled' }]);
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
