import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  compareTdd,
  deriveTdd,
  parseTddConfig,
  planTddReports,
  renderTdd,
  validateTdd,
  VIDA_TDD_DOCUMENT_TYPE_ID,
  VIDA_TDD_PROCESS_ID,
  type TddReporterRole,
} from '../../../src/reporting/tdd';
import { CORPUS_DIR, requireCorpus } from '../../support/corpus';
import { requirePacks, validator } from '../validation/support';
import {
  ORACLE_EXAMPLES,
  ORACLE_EXCHANGE as EXCHANGE,
  oracleConfig,
  readCorpusInvoice as read,
  withEndpoints,
} from './tdd-oracle-support';

/**
 * The oracle: every TDD we derive is validated with the official TDD 1.0.0 XSD and Schematron (the TDD rules plus the
 * CEN EN 16931 and Peppol rules on the reported document), run through the gateway's own validator. The examples and
 * the findings pinned per example are in tdd-oracle-support.ts; the Slovak profile is tdd-oracle-sk.test.ts.
 */

describe('TDD oracle: derived documents pass the official TDD 1.0.0 artefacts', () => {
  beforeAll(() => {
    requireCorpus('en16931');
    requirePacks(['peppol-vida-tdd-xsd', 'peppol-vida-tdd']);
  });

  const cases: Array<[string, string, TddReporterRole, string[]]> = ORACLE_EXAMPLES.flatMap(({ file, what, vida }) => [
    [file, what, 'C2' as const, vida.C2],
    [file, what, 'C3' as const, vida.C3],
  ]);

  it.each(cases)('%s (%s) as %s: official findings %j', async (file, _what, role, expected) => {
    const inv = withEndpoints(read(file));
    const cfg = oracleConfig();
    const plan = planTddReports(inv, role === 'C2' ? 'outbound' : 'inbound', cfg);
    expect(plan.skipped).toEqual([]);
    const tdd = deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg);
    expect(tdd.profile).toBe('vida-1');
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

  it('a configuration written before profiles (top-level document type and process) still gives vida-1', () => {
    const cfg = oracleConfig();
    const legacy = parseTddConfig({
      ...cfg,
      documentTypeId: VIDA_TDD_DOCUMENT_TYPE_ID,
      processId: VIDA_TDD_PROCESS_ID,
      authorities: { DK: { id: 'DK', receiver: '0242:000000-taxsim.dk', roles: ['C2'] } },
    });
    expect(legacy.authorities.DK!.profile).toBe('vida-1');
    expect(legacy.documentTypeId).toBe(cfg.documentTypeId);
    expect(legacy.processId).toBe(cfg.processId);
  });

  it('the official validation catches a broken TDD (the oracle is not blind)', async () => {
    const inv = withEndpoints(read(ORACLE_EXAMPLES[0]!.file));
    const cfg = oracleConfig();
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
    const cfg = oracleConfig();
    const plan = planTddReports(inv, 'outbound', cfg);
    expect(() => deriveTdd(inv, plan.reports[0]!, EXCHANGE, cfg)).toThrow(/BT-31 Seller VAT identifier/);
  });

  it('lists the corpus examples it uses', () => {
    for (const { file } of ORACLE_EXAMPLES)
      expect(readdirSync(path.join(CORPUS_DIR, path.dirname(file)))).toContain(path.basename(file));
  });
});
