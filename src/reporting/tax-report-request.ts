/**
 * Another tax report of a document, asked for by an integrator (API) or an operator (admin CLI): a submit again after
 * a first report that was not accepted, a resubmit (R) or a disregard (D). The document's history says which may
 * follow (./tax-report-lifecycle.ts); the report's own run does the rest. A report number runs once, ever, so two
 * requests at once start one report and the other is refused.
 */
import { GatewayError } from '../core/gateway-error';
import { reportTaxWorkflowId } from '../core/identifiers';
import type { TaxReportRef, TaxReportType } from '../core/document-states';
import type { ReportTaxInput } from '../../workflows/contracts/report-tax';
import { nextTaxReport } from './tax-report-lifecycle';

/** Starts a report's run; 'already-started' when that report number has run. Absent: this process cannot. */
export interface TaxReportStarter {
  startTaxReport?(input: ReportTaxInput): Promise<'started' | 'already-started'>;
}

export interface TaxReportRequested {
  id: string;
  /** The report's number (the gateway's own is 1). */
  report: number;
  reportType: TaxReportType;
  /** Its run. */
  run: string;
}

/**
 * Starts the next report of the document, or says why none may follow now (CONFLICT). Without a starter or the
 * reporting settings, reporting is not configured here (DEPENDENCY_UNAVAILABLE).
 */
export async function requestTaxReport(
  starter: TaxReportStarter | undefined,
  settings: { acknowledgementTimeoutMs: number } | undefined,
  doc: {
    tenantId: string;
    documentId: string;
    direction: ReportTaxInput['direction'];
    history: Array<{ key: string }>;
  },
  reportType: TaxReportType,
): Promise<TaxReportRequested> {
  if (!settings || !starter?.startTaxReport)
    throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'Tax reporting is not configured on this gateway');
  const refuse = (why: string) =>
    new GatewayError('CONFLICT', `No ${reportType} of document ${doc.documentId} now: ${why}`, {
      details: { documentId: doc.documentId },
    });
  const next = nextTaxReport(doc.history, reportType);
  if (!next.ok) throw refuse(next.reason);
  const report: TaxReportRef = next.report;
  const started = await starter.startTaxReport({
    tenantId: doc.tenantId,
    documentId: doc.documentId,
    direction: doc.direction,
    report,
    acknowledgementTimeoutMs: settings.acknowledgementTimeoutMs,
  });
  if (started === 'already-started') throw refuse(`its tax report ${report.sequence} was started already`);
  return {
    id: doc.documentId,
    report: report.sequence,
    reportType,
    run: reportTaxWorkflowId(doc.tenantId, doc.documentId, report.sequence),
  };
}
