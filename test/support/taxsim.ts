/**
 * Tax Data Documents for taxsim's tests, derived by the library (src/reporting/tdd) from a corpus invoice: the Peppol
 * BIS 3 example whose supplier and buyer are both Danish (DK12345678 → DK87654321), reported as C2 and as C3 to the
 * participant taxsim serves for DK.
 */
import { randomUUID } from 'node:crypto';
import { readUbl, type Invoice } from '../../src/en16931';
import { parseXml } from '../../src/formats';
import {
  deriveTdd,
  parseTddConfig,
  planTddReports,
  renderTdd,
  VIDA_TDD_DOCUMENT_TYPE_ID,
  VIDA_TDD_PROCESS_ID,
  type TddReportType,
  type TddReporterRole,
  type TddVersion,
} from '../../src/reporting/tdd';
import { corpusFile, requireCorpus } from './corpus';

export const BIS3_POSITIVE = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';
/** The reporter's service provider id written as TDT-015 (the gateway's demo SPID). */
export const REPORTER_SPID = '000001';

export function bis3Invoice(): Invoice {
  requireCorpus(BIS3_POSITIVE);
  return readUbl(parseXml(corpusFile(BIS3_POSITIVE).toString('utf8'))).invoice;
}

export interface TddOptions {
  role?: TddReporterRole;
  reportType?: TddReportType;
  /** The participant id of taxsim for DK (`0242:…`). */
  receiver: string;
  version?: TddVersion;
  tddUuid?: string;
  transmissionUuid?: string;
  /** Changes the invoice before deriving (e.g. another number: another Invoice UUID). */
  invoice?: (inv: Invoice) => Invoice;
}

/** A TDD of the BIS 3 example, rendered by the library. */
export function bis3Tdd(o: TddOptions): string {
  const role = o.role ?? 'C2';
  const config = parseTddConfig({
    version: o.version ?? '1.0.0',
    serviceProviderId: REPORTER_SPID,
    documentTypeId: VIDA_TDD_DOCUMENT_TYPE_ID,
    processId: VIDA_TDD_PROCESS_ID,
    authorities: { DK: { id: 'DK', name: 'Skattestyrelsen', receiver: o.receiver, roles: ['C2', 'C3'] } },
  });
  const inv = (o.invoice ?? ((i) => i))(bis3Invoice());
  const plan = planTddReports(inv, role === 'C2' ? 'outbound' : 'inbound', config);
  if (plan.reports.length !== 1) throw new Error(`no ${role} report planned: ${JSON.stringify(plan.skipped)}`);
  return renderTdd(
    deriveTdd(
      inv,
      plan.reports[0]!,
      {
        reportType: o.reportType ?? 'submit',
        tddUuid: o.tddUuid ?? randomUUID(),
        transmissionUuid: o.transmissionUuid ?? randomUUID(),
        issuedAt: new Date('2026-11-28T10:15:30.123Z'),
      },
      config,
    ),
  );
}
