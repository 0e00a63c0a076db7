import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readCii, readUbl, type Invoice } from '../../../src/en16931';
import { parseXml } from '../../../src/formats';
import {
  compareTdd,
  deriveTdd,
  parseTddConfig,
  planTddReports,
  renderTdd,
  validateTdd,
  VIDA_TDD_DOCUMENT_TYPE_ID,
  VIDA_TDD_PROCESS_ID,
  type TddConfig,
  type TddReporterRole,
} from '../../../src/reporting/tdd';
import { CORPUS_DIR, corpusFile, requireCorpus } from '../../support/corpus';
import { requirePacks, validator } from '../validation/support';

/**
 * The oracle: every TDD we derive is validated with the official TDD 1.0.0 XSD and Schematron (the TDD rules plus the
 * CEN EN 16931 and Peppol rules on the reported document), run through the gateway's own validator.
 */

const EU = 'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK NO'.split(' ');

function config(): TddConfig {
  return parseTddConfig({
    version: '1.0.0',
    serviceProviderId: '000000',
    documentTypeId: VIDA_TDD_DOCUMENT_TYPE_ID,
    processId: VIDA_TDD_PROCESS_ID,
    authorities: Object.fromEntries(
      EU.map((cc) => [cc, { id: cc, receiver: `0242:000000-taxsim.${cc.toLowerCase()}`, roles: ['C2', 'C3'] }]),
    ),
  });
}

function read(relative: string): Invoice {
  const doc = parseXml(corpusFile(relative).toString('utf8'));
  return (relative.includes('cii') ? readCii(doc) : readUbl(doc)).invoice;
}

/**
 * Corpus examples and what the official artefacts say about the TDD derived from each, per role. An empty list is a
 * valid TDD. Where they find errors the TDD reports the invoice faithfully and the finding is about the invoice or a
 * gap of TDD 1.0.0 itself, so the test pins the exact rules and notices any change:
 * - PEPPOL-EN16931-R120: the line has an item price base quantity (BT-149); TDD 1.0.0 allows only the net price in
 *   cac:Price (ibr-tdd-82), so the inherited Peppol rule recomputes the line amount without it and fails. We do not
 *   rewrite BT-146 to hide this.
 * - DK-R-005, NL-R-008, NO-R-001: national Peppol rules the source invoice itself breaks (CEN examples, not Peppol
 *   BIS invoices).
 * - PEPPOL-COMMON-R049, ibr-tdd-17, PEPPOL-EN16931-CL008: the reporting party's endpoint (BT-49 / BT-34) as written in
 *   the source is not a valid Peppol participant id.
 */
const EXAMPLES: Array<[string, string, { C2: string[]; C3: string[] }]> = [
  ['en16931/ubl-examples/BIS3_Invoice_positive.XML', 'Peppol BIS 3 invoice', { C2: [], C3: [] }],
  ['en16931/ubl-examples/BIS3_Invoice_negativ.XML', 'Peppol BIS 3 invoice, negative amounts', { C2: [], C3: [] }],
  ['en16931/ubl-examples/issue116.xml', 'Peppol BIS 3 invoice', { C2: [], C3: ['PEPPOL-COMMON-R049'] }],
  ['en16931/ubl-examples/ubl-tc434-creditnote1.xml', 'credit note', { C2: [], C3: [] }],
  ['en16931/ubl-examples/ubl-tc434-example6.xml', 'example 6', { C2: [], C3: [] }],
  ['en16931/ubl-examples/ubl-tc434-example9.xml', 'example 9', { C2: [], C3: [] }],
  ['en16931/ubl-examples/ubl-tc434-example1.xml', 'several VAT rates', both(['PEPPOL-EN16931-R120'])],
  ['en16931/ubl-examples/ubl-tc434-example2.xml', 'allowances', both(['PEPPOL-EN16931-R120', 'NO-R-001'])],
  ['en16931/ubl-examples/ubl-tc434-example3.xml', 'example 3', both(['PEPPOL-EN16931-R120', 'DK-R-005'])],
  ['en16931/ubl-examples/ubl-tc434-example4.xml', 'example 4', both(['DK-R-005'])],
  ['en16931/ubl-examples/ubl-tc434-example5.xml', 'example 5', both(['ibr-tdd-17', 'PEPPOL-EN16931-CL008'])],
  ['en16931/ubl-examples/ubl-tc434-example8.xml', 'example 8', both(['PEPPOL-EN16931-R120'])],
  ['en16931/ubl-examples/ubl-tc434-example10.xml', 'example 10', both(['PEPPOL-EN16931-R120'])],
  ['en16931/ubl-examples/guide-example1.xml', 'guide example 1', both(['PEPPOL-EN16931-R120', 'NL-R-008'])],
  ['en16931/ubl-examples/guide-example2.xml', 'guide example 2', both(['PEPPOL-EN16931-R120', 'NO-R-001'])],
  ['en16931/ubl-examples/guide-example3.xml', 'guide example 3', both(['PEPPOL-EN16931-R120', 'DK-R-005'])],
  ['en16931/cii-examples/CII_example1.xml', 'CII source', both(['PEPPOL-EN16931-R120'])],
];

function both(rules: string[]): { C2: string[]; C3: string[] } {
  return { C2: rules, C3: rules };
}

const EXCHANGE = {
  reportType: 'submit' as const,
  tddUuid: '8f0a6a4e-3c55-4b43-9b0d-4f5b3b3e2f10',
  transmissionUuid: '1b8d8d2e-6d37-4c5e-8d2a-0a5c1f3c9e77',
  issuedAt: new Date('2026-11-28T10:15:30.123Z'),
};

/** Endpoints are needed for the reporting party (TDT-013); examples without them get one, said here. */
function withEndpoints(inv: Invoice): Invoice {
  return {
    ...inv,
    // Over Peppol the invoice is delivered as BIS 3, whose rules the TDD applies to the reported document.
    processControl: {
      specificationIdentifier: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
      businessProcessType: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    },
    seller: {
      ...inv.seller,
      electronicAddress: inv.seller.electronicAddress ?? { schemeId: '0088', value: '5790000435951' },
    },
    buyer: {
      ...inv.buyer,
      electronicAddress: inv.buyer.electronicAddress ?? { schemeId: '0088', value: '5790000435968' },
    },
  };
}

describe('TDD oracle: derived documents pass the official TDD 1.0.0 artefacts', () => {
  beforeAll(() => {
    requireCorpus('en16931');
    requirePacks(['peppol-vida-tdd-xsd', 'peppol-vida-tdd']);
  });

  const cases: Array<[string, string, TddReporterRole, string[]]> = EXAMPLES.flatMap(([file, what, found]) => [
    [file, what, 'C2' as const, found.C2],
    [file, what, 'C3' as const, found.C3],
  ]);

  it.each(cases)('%s (%s) as %s: official findings %j', async (file, _what, role, expected) => {
    const inv = withEndpoints(read(file));
    const cfg = config();
    const plan = planTddReports(inv, role === 'C2' ? 'outbound' : 'inbound', cfg);
    expect(plan.skipped).toEqual([]);
    const tdd = deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg);
    const xml = renderTdd(tdd);
    const result = await validateTdd(validator(), xml, '1.0.0');
    const errors = result.assertions.filter((a) => a.flag === 'error');
    expect([...new Set(errors.map((a) => a.ruleId))].sort()).toEqual([...expected].sort());
    expect(result.ruleSets.map((r) => `${r.id}@${r.version}:${r.outcome}`)).toEqual([
      'peppol-vida-tdd-xsd@1.0.0:passed',
      `peppol-vida-tdd@1.0.0:${expected.length === 0 ? 'passed' : 'failed'}`,
    ]);
    expect(result.isValid).toBe(expected.length === 0);
    // Rendering again from the same exchange gives the same document, term for term.
    expect(compareTdd(xml, renderTdd(deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg)))).toEqual([]);
  });

  it('the official validation catches a broken TDD (the oracle is not blind)', async () => {
    const inv = withEndpoints(read(EXAMPLES[0]![0]));
    const cfg = config();
    const plan = planTddReports(inv, 'outbound', cfg);
    const xml = renderTdd(deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg)).replace(
      '<pxs:ReporterRole>C2</pxs:ReporterRole>',
      '<pxs:ReporterRole>C9</pxs:ReporterRole>',
    );
    const result = await validateTdd(validator(), xml, '1.0.0');
    expect(result.isValid).toBe(false);
    expect(result.assertions.map((a) => a.ruleId)).toContain('ibr-tdd-09');
  });

  it('refuses to validate TDD 1.1.0, whose artefacts are not pinned', async () => {
    await expect(validateTdd(validator(), '<x/>', '1.1.0')).rejects.toMatchObject({ code: 'NOT_IMPLEMENTED' });
  });

  it('refuses an invoice without a seller VAT identifier (no Invoice UUID without BT-31)', () => {
    const inv = withEndpoints(read('en16931/ubl-examples/ubl-tc434-example7.xml'));
    const cfg = config();
    const plan = planTddReports(inv, 'outbound', cfg);
    expect(() => deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg)).toThrow(/BT-31 Seller VAT identifier/);
  });

  it('lists the corpus examples it uses', () => {
    const files = readdirSync(path.join(CORPUS_DIR, 'en16931/ubl-examples'));
    for (const [file] of EXAMPLES.filter(([f]) => f.includes('ubl-examples')))
      expect(files).toContain(path.basename(file));
  });
});
