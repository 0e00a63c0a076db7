import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isGatewayError } from '../../../../src/core/gateway-error';
import { parseXml } from '../../../../src/formats';
import { createValidator, type ValidationResult } from '../../../../src/validation';
import { buildXdmTree, compiledPack, runCompiledPack } from '../../../../src/validation/compiled';
import { CORPUS_DIR } from '../../../support/corpus';
import { orderXml } from '../../../support/peppol/orders';
import { RULES_DIR, requirePacks, validator } from '../support';

jest.setTimeout(300_000);

/**
 * The compiled rules in the validator: which engine ran each pack, the fallback to SaxonJS (a pack the compiler
 * refuses, a dynamic error on one document), and the setting that forces SaxonJS. The agreement of the two engines
 * over the suites and generated variants is the gate in compiled-agreement.test.ts.
 */

const saxon = createValidator({ rulesDir: RULES_DIR, rulesEngine: 'saxon-js' });

function corpus(...rel: string[]): Buffer {
  return readFileSync(path.join(CORPUS_DIR, ...rel));
}

/** The result as the API answers it: without the internal engine of each pack. */
function answer(r: ValidationResult): unknown {
  return { ...r, ruleSets: r.ruleSets.map(({ id, version, outcome }) => ({ id, version, outcome })) };
}

beforeAll(() =>
  requirePacks(['ubl-2.1', 'en16931-ubl', 'peppol-bis3-ubl', 'xrechnung-ubl', 'nlcius-cii', 'peppol-mlr']),
);

describe('the main packs compile', () => {
  it.each([
    'en16931-ubl',
    'en16931-cii',
    'peppol-bis3-ubl',
    'xrechnung-ubl',
    'xrechnung-cii',
    'nlcius-cii',
    'si-ubl-2.0',
  ])('%s', async (id) => {
    const pack = await validator().store.get(id);
    if (pack.kind !== 'schematron') throw new Error(`${id} is not a Schematron pack`);
    const c = compiledPack(pack);
    expect(c.ok ? 'compiled' : c.reason).toBe('compiled');
  });
});

/**
 * The packs that run on SaxonJS because the compiler refuses them, and why; every other pinned pack must compile, so
 * the list cannot grow unnoticed (docs/decisions.md, "Business rules: the compiled engine").
 */
const REFUSED: Record<string, RegExp> = {
  svefaktura: /local-name style/,
};

it('compiles every pinned Schematron pack but the listed ones, which say why', async () => {
  const seen: Record<string, string> = {};
  for (const s of validator().status()) {
    if (s.kind !== 'schematron') continue;
    const pack = await validator().store.get(s.id, s.version);
    if (pack.kind !== 'schematron') continue;
    const c = compiledPack(pack);
    seen[`${s.id}@${s.version}`] = c.ok ? 'compiled' : c.reason;
  }
  const expected = Object.fromEntries(
    Object.keys(seen).map((k) => {
      const re = REFUSED[k.split('@')[0]!];
      return [k, re ? expect.stringMatching(re) : 'compiled'];
    }),
  );
  expect(seen).toEqual(expected);
  expect(Object.keys(seen).length).toBeGreaterThan(30);
});

describe('the validator on the compiled rules', () => {
  it('runs every pack of an EN 16931 invoice compiled, with the answer SaxonJS gives', async () => {
    const doc = corpus('en16931', 'ubl-examples', 'ubl-tc434-example1.xml');
    const compiled = await validator().validate(doc);
    const reference = await saxon.validate(doc);
    expect(compiled.ruleSets.filter((r) => r.id !== 'ubl-2.1').map((r) => r.engine)).toEqual(
      compiled.ruleSets.filter((r) => r.id !== 'ubl-2.1').map(() => 'compiled'),
    );
    expect(reference.ruleSets.filter((r) => r.id !== 'ubl-2.1').every((r) => r.engine === 'saxon-js')).toBe(true);
    expect(answer(compiled)).toEqual(answer(reference));
  });

  it('gives the same findings, in the same order, on an invoice that breaks rules', async () => {
    const text = corpus('en16931', 'ubl-examples', 'ubl-tc434-example1.xml')
      .toString('utf8')
      .replace(/<cbc:DocumentCurrencyCode>EUR</, '<cbc:DocumentCurrencyCode>XXX<');
    const compiled = await validator().validate(text, { ruleSet: 'en16931-ubl,peppol-bis3-ubl' });
    const reference = await saxon.validate(text, { ruleSet: 'en16931-ubl,peppol-bis3-ubl' });
    expect(compiled.assertions.length).toBeGreaterThan(0);
    expect(answer(compiled)).toEqual(answer(reference));
    expect(compiled.ruleSets.map((r) => r.engine)).toEqual(['compiled', 'compiled']);
  });

  /** Each (document, pack) compiled and on SaxonJS: the same answer, the compiled rules ran; the errors fired. */
  async function compiledAsSaxon(cases: ReadonlyArray<[string, string]>): Promise<string[]> {
    const fired: string[] = [];
    for (const [text, ruleSet] of cases) {
      const compiled = await validator().validate(text, { ruleSet });
      const reference = await saxon.validate(text, { ruleSet });
      expect(compiled.ruleSets.map((r) => r.engine)).toEqual(['compiled']);
      expect(answer(compiled)).toEqual(answer(reference));
      fired.push(...compiled.assertions.filter((a) => a.flag === 'error').map((a) => a.ruleId));
    }
    return fired;
  }

  it('reads the code lists of the Factur-X packs with document(), as SaxonJS does', async () => {
    const minimum = corpus('facturx', 'mustang', 'cii', 'facturFrMinimum.xml').toString('utf8');
    const cases: Array<[string, string]> = [
      [minimum, 'facturx-minimum'],
      // A currency outside the code list: the document() lookup finds nothing and the rule fires.
      [minimum.replace(/<ram:InvoiceCurrencyCode>[^<]*</, '<ram:InvoiceCurrencyCode>ZZZ<'), 'facturx-minimum'],
    ];
    expect(await compiledAsSaxon(cases)).not.toEqual([]);
  });

  it("evaluates xsl:key as SaxonJS does: order line ids (T01), and the MLR's line references (T71)", async () => {
    const order = orderXml().toString('utf8');
    const cases: Array<[string, string]> = [
      [order, 'peppol-order'],
      // Two lines with one id: key('k_lineId', cbc:ID) finds both, and the uniqueness rule fires on each.
      [order.replace('<cbc:ID>2</cbc:ID><cbc:Quantity', '<cbc:ID>1</cbc:ID><cbc:Quantity'), 'peppol-order'],
      [corpus('peppol', 'mls', ...mlsSample()).toString('utf8'), 'peppol-mlr'],
    ];
    expect(await compiledAsSaxon(cases)).not.toEqual([]);
  });

  it('runs a pack the compiler refuses on SaxonJS, naming why', async () => {
    const pack = await validator().store.get('svefaktura');
    if (pack.kind !== 'schematron') throw new Error('svefaktura is not a Schematron pack');
    const c = compiledPack(pack);
    expect(c.ok).toBe(false);
    expect(c.ok ? '' : c.reason).toMatch(/local-name style/);
    const doc = corpus('en16931', 'ubl-examples', 'ubl-tc434-example1.xml');
    const r = await validator().validate(doc, { ruleSet: 'svefaktura' });
    expect(r.ruleSets).toEqual([expect.objectContaining({ id: 'svefaktura', engine: 'saxon-js' })]);
  });

  it('lets SaxonJS judge a document on which a rule raises a dynamic error, with its error', async () => {
    const file = corpus(
      'nlcius',
      'si-ubl-2.0.3',
      'SI-UBL-2.0_UBL-SR-09_warning_multiple_legalentity_registrationname.xml',
    );
    const fromCompiled = await validator()
      .validate(file)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    const fromSaxon = await saxon.validate(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGatewayError(fromCompiled)).toBe(true);
    expect(fromCompiled).toMatchObject({ details: { reason: 'RULES_EVALUATION_FAILED', errorCode: 'XPTY0004' } });
    expect((fromCompiled as Error).message).toBe((fromSaxon as Error).message);
  });
});

describe('the compiled engine alone', () => {
  it('raises the dynamic error itself (so the validator can hand the document to SaxonJS)', async () => {
    const pack = await validator().store.get('si-ubl-2.0');
    if (pack.kind !== 'schematron') throw new Error('si-ubl-2.0 is not a Schematron pack');
    const c = compiledPack(pack);
    if (!c.ok) throw new Error(c.reason);
    const file = corpus(
      'nlcius',
      'si-ubl-2.0.3',
      'SI-UBL-2.0_UBL-SR-09_warning_multiple_legalentity_registrationname.xml',
    );
    expect(() => runCompiledPack(c, buildXdmTree(parseXml(file)))).toThrow(
      expect.objectContaining({ code: 'XPTY0004' }),
    );
  });
});

/** The MLS corpus folder's first sample (checked with the MLR pack, which uses xsl:key). */
function mlsSample(): string[] {
  const dir = path.join(CORPUS_DIR, 'peppol', 'mls');

  const walk = (rel: string[]): string[] | undefined => {
    for (const name of readdirSync(path.join(dir, ...rel)).sort()) {
      const next = [...rel, name];
      if (statSync(path.join(dir, ...next)).isDirectory()) {
        const found = walk(next);
        if (found) return found;
      } else if (name.endsWith('.xml')) return next;
    }
    return undefined;
  };
  const found = walk([]);
  if (!found) throw new Error(`no XML sample under ${dir}`);
  return found;
}
