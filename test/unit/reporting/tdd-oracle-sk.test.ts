import type { Invoice } from '../../../src/en16931';
import {
  compareTdd,
  deriveTdd,
  planTddReports,
  renderTdd,
  TDD_PROFILES,
  validateTdd,
  type TddProfileId,
  type TddReporterRole,
} from '../../../src/reporting/tdd';
import { requireCorpus } from '../../support/corpus';
import { requirePacks, validator } from '../validation/support';
import {
  ORACLE_EXAMPLES,
  ORACLE_EXCHANGE as EXCHANGE,
  oracleConfig,
  readCorpusInvoice as read,
  withEndpoints,
} from './tdd-oracle-support';

/**
 * The oracle for the Slovak Republic TDD 1.0.0 (profile sk-1): every TDD derived from the corpus examples is validated
 * with the official Slovak Schematron (TDD rules, then the CEN EN 16931 and Peppol rules on the reported document).
 * No Slovak XSD is published, so no schema check runs, and the result says so (its only rule set is the Schematron).
 *
 * Where the Slovak artefacts differ from the ViDA pilot 1.0.0 ones (read from the two sets of XSLT):
 * - the Slovak CEN rules keep BR-07 (an invoice shall contain the Buyer name BT-44), which ViDA 1.0.0 dropped when it
 *   made the buyer's terms optional;
 * - the Slovak TDD rules add ibr-tdd-86 (cac:PartyLegalEntity of the buyer MUST NOT contain elements other than
 *   cbc:RegistrationName), and so number "the Invoice UUID (TDT-017) MUST be present" ibr-tdd-87 where ViDA numbers
 *   it ibr-tdd-86;
 * - otherwise only the namespace and the TDT-001 value (ibr-tdd-01) differ.
 */

const SK: TddProfileId = 'sk-1';

function rulesFired(result: { assertions: Array<{ flag: string; ruleId: string }> }): string[] {
  return [...new Set(result.assertions.filter((a) => a.flag === 'error').map((a) => a.ruleId))].sort();
}

function render(inv: Invoice, profile: TddProfileId, role: TddReporterRole = 'C2'): string {
  const cfg = oracleConfig(profile);
  const plan = planTddReports(inv, role === 'C2' ? 'outbound' : 'inbound', cfg);
  return renderTdd(deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg));
}

describe('TDD oracle, Slovak profile: derived documents against the official SK TDD 1.0.0 Schematron', () => {
  beforeAll(() => {
    requireCorpus('en16931');
    requirePacks(['peppol-sk-tdd', 'peppol-vida-tdd-xsd', 'peppol-vida-tdd']);
  });

  const cases: Array<[string, string, TddReporterRole, string[]]> = ORACLE_EXAMPLES.flatMap(({ file, what, sk }) => [
    [file, what, 'C2' as const, sk.C2],
    [file, what, 'C3' as const, sk.C3],
  ]);

  it.each(cases)('%s (%s) as %s: official SK findings %j', async (file, _what, role, expected) => {
    const inv = withEndpoints(read(file));
    const cfg = oracleConfig(SK);
    const plan = planTddReports(inv, role === 'C2' ? 'outbound' : 'inbound', cfg);
    expect(plan.skipped).toEqual([]);
    const tdd = deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg);
    expect(tdd.profile).toBe(SK);
    const xml = renderTdd(tdd);
    expect(xml).toContain('xmlns:pxs="urn:peppol:schema:sk-taxdata:1.0"');
    expect(xml).toContain('<cbc:CustomizationID>urn:peppol:taxdata:sk-1</cbc:CustomizationID>');
    const result = await validateTdd(validator(), xml, '1.0.0', SK);
    expect(rulesFired(result)).toEqual([...expected].sort());
    // Schematron only: no schema outcome is claimed.
    expect(result.ruleSets.map((r) => `${r.id}@${r.version}:${r.outcome}`)).toEqual([
      `peppol-sk-tdd@1.0.0:${expected.length === 0 ? 'passed' : 'failed'}`,
    ]);
    expect(result.format).toMatchObject({ id: 'peppol-sk-tdd', customizationId: 'urn:peppol:taxdata:sk-1' });
    expect(result.isValid).toBe(expected.length === 0);
    expect(compareTdd(xml, renderTdd(deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg)))).toEqual([]);
  });

  it('the SK TDD differs from the ViDA one only in the namespace and TDT-001', () => {
    const inv = withEndpoints(read(ORACLE_EXAMPLES[0]!.file));
    const sk = render(inv, SK);
    const vida = render(inv, 'vida-1');
    expect(sk).toBe(
      vida
        .replace(TDD_PROFILES['vida-1'].namespace, TDD_PROFILES['sk-1'].namespace)
        .replace(
          `<cbc:CustomizationID>${TDD_PROFILES['vida-1'].customizationId}<`,
          `<cbc:CustomizationID>${TDD_PROFILES['sk-1'].customizationId}<`,
        ),
    );
  });

  it('BR-07: SK requires the buyer name (BT-44), ViDA 1.0.0 does not', async () => {
    const src = withEndpoints(read(ORACLE_EXAMPLES[0]!.file));
    const noName: Invoice = { ...src, buyer: { ...src.buyer, name: undefined } };
    // The SK profile asks for it before deriving (TDD_PROFILES['sk-1'].requiredTerms) ...
    expect(() => render(noName, SK)).toThrow(/BT-44 Buyer name \(sk-1: BR-07\)/);
    const vida = await validateTdd(validator(), render(noName, 'vida-1'), '1.0.0', 'vida-1');
    expect(rulesFired(vida)).toEqual([]);
    // ... as the official SK rules do: the SK TDD with the buyer's legal entity taken out.
    const skXml = render(src, SK).replace(/<cac:PartyLegalEntity>[\s\S]*?<\/cac:PartyLegalEntity>/, '');
    expect(skXml).not.toContain('RegistrationName');
    expect(rulesFired(await validateTdd(validator(), skXml, '1.0.0', SK))).toEqual(['BR-07']);
  });

  it('ibr-tdd-86: SK allows only the registration name in the buyer legal entity', async () => {
    const inv = withEndpoints(read(ORACLE_EXAMPLES[0]!.file));
    const extra = (xml: string): string =>
      xml.replace(/(<cbc:RegistrationName>[^<]*<\/cbc:RegistrationName>)/, '$1<cbc:CompanyID>123</cbc:CompanyID>');
    const skXml = extra(render(inv, SK));
    expect(skXml).toContain('<cbc:CompanyID>123</cbc:CompanyID>');
    const sk = await validateTdd(validator(), skXml, '1.0.0', SK);
    const vida = await validateTdd(validator(), extra(render(inv, 'vida-1')), '1.0.0', 'vida-1');
    expect(rulesFired(sk)).toEqual(['ibr-tdd-86']);
    expect(rulesFired(vida)).toEqual([]);
  });

  it('the Invoice UUID (TDT-017) rule is ibr-tdd-87 in SK and ibr-tdd-86 in ViDA', async () => {
    const inv = withEndpoints(read(ORACLE_EXAMPLES[0]!.file));
    const noUuid = (xml: string): string =>
      xml.replace(/(<pxs:ReportedDocument>[\s\S]*?)<cbc:UUID>[^<]*<\/cbc:UUID>/, '$1');
    const sk = await validateTdd(validator(), noUuid(render(inv, SK)), '1.0.0', SK);
    const vida = await validateTdd(validator(), noUuid(render(inv, 'vida-1')), '1.0.0', 'vida-1');
    expect(rulesFired(sk)).toEqual(['ibr-tdd-87']);
    expect(rulesFired(vida)).toEqual(['ibr-tdd-86']);
  });

  it('the SK validation catches a broken TDD (the oracle is not blind)', async () => {
    const inv = withEndpoints(read(ORACLE_EXAMPLES[0]!.file));
    const xml = render(inv, SK).replace(
      '<pxs:ReporterRole>C2</pxs:ReporterRole>',
      '<pxs:ReporterRole>C9</pxs:ReporterRole>',
    );
    const result = await validateTdd(validator(), xml, '1.0.0', SK);
    expect(result.isValid).toBe(false);
    expect(rulesFired(result)).toEqual(['ibr-tdd-09']);
  });

  it('refuses a document of the other profile instead of passing it unchecked', async () => {
    const inv = withEndpoints(read(ORACLE_EXAMPLES[0]!.file));
    await expect(validateTdd(validator(), render(inv, 'vida-1'), '1.0.0', SK)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/not a Peppol Slovak Republic Tax Data Document/),
    });
    await expect(validateTdd(validator(), render(inv, SK), '1.0.0')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('refuses SK 1.1.0, a version the Slovak profile does not have', async () => {
    await expect(validateTdd(validator(), '<x/>', '1.1.0', SK)).rejects.toMatchObject({
      code: 'NOT_IMPLEMENTED',
      message: expect.stringMatching(/has no version 1\.1\.0/),
    });
  });
});
