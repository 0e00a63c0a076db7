import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRepository } from '../../src/storage/document.repository';
import { nextTaxReport } from '../../src/reporting/tax-report-lifecycle';
import type { TddReportType } from '../../src/reporting/tdd/types';
import { reportTaxWorkflowId } from '../../workflows/contracts/report-tax';
import type { WorkflowStarter } from '../workflow-client';
import { documentIdParam, partyOf, requireParty } from '../access';
import { badField, jsonBody } from '../request';

export interface TaxReportRouteDeps {
  directory: DirectoryRepository;
  documents: DocumentRepository;
  workflows: WorkflowStarter;
  /** The tax reporting settings of this gateway; absent: reporting is not configured (TAX_REPORTING_CONFIG). */
  taxReporting?: { acknowledgementTimeoutMs: number };
}

const REPORT_TYPES: ReadonlySet<string> = new Set<TddReportType>(['submit', 'resubmit', 'disregard']);

function reportTypeOf(body: unknown): TddReportType {
  const value = body && typeof body === 'object' ? (body as Record<string, unknown>)['reportType'] : undefined;
  if (typeof value !== 'string' || !REPORT_TYPES.has(value))
    throw badField('reportType must be one of submit, resubmit, disregard', 'reportType');
  return value as TddReportType;
}

/**
 * Another tax report of an invoice (beyond the contract, which has the gateway report every invoice by itself): a
 * submit again after a first report that was not accepted, a resubmit (R) of an accepted report, or a disregard (D).
 * The document's history says which may follow (src/reporting/tax-report-lifecycle.ts); the report's run does the
 * rest as for the first report and ends in TaxReportSent or TaxReportError. One report at a time: a report number
 * runs once, ever, so two requests at once start one report and the other gets 409.
 */
export function registerTaxReportRoutes(router: Router, deps: TaxReportRouteDeps): void {
  const party = requireParty(deps.directory);
  const bodyJson = jsonBody('16kb', 'the tax report request');
  const routes = [
    { path: '/api/v1/:partyId/salesInvoice/:documentId/taxReport', direction: 'outbound', name: 'Sales' },
    { path: '/api/v1/:partyId/purchaseInvoice/:documentId/taxReport', direction: 'inbound', name: 'Purchase' },
  ] as const;
  for (const route of routes)
    router.post(route.path, party, bodyJson, async (req: Request, res: Response) => {
      const { tenantId, partyId } = partyOf(res);
      const documentId = documentIdParam(req);
      const reportType = reportTypeOf(req.body);
      const doc = await deps.documents.findForParty(tenantId, partyId, documentId);
      if (!doc || doc.direction !== route.direction)
        throw new GatewayError('DOCUMENT_NOT_FOUND', `${route.name} document ${documentId} not found`);
      if (!deps.taxReporting || !deps.workflows.startTaxReport)
        throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'Tax reporting is not configured on this gateway');
      const next = nextTaxReport(doc.history, reportType);
      if (!next.ok)
        throw new GatewayError('CONFLICT', `No ${reportType} of document ${documentId} now: ${next.reason}`, {
          details: { documentId },
        });
      const started = await deps.workflows.startTaxReport({
        tenantId,
        documentId,
        direction: route.direction,
        report: next.report,
        acknowledgementTimeoutMs: deps.taxReporting.acknowledgementTimeoutMs,
      });
      if (started === 'already-started')
        throw new GatewayError(
          'CONFLICT',
          `No ${reportType} of document ${documentId} now: its tax report ${next.report.sequence} was started already`,
          { details: { documentId } },
        );
      res.status(202).json({
        id: documentId,
        report: next.report.sequence,
        reportType,
        run: reportTaxWorkflowId(tenantId, documentId, next.report.sequence),
      });
    });
}
