import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRepository } from '../../src/storage/document.repository';
import { parseTaxReportType, type TaxReportType } from '../../src/core/document-states';
import { requestTaxReport } from '../../src/reporting/tax-report-request';
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

function reportTypeOf(body: unknown): TaxReportType {
  const type = parseTaxReportType(
    body && typeof body === 'object' ? (body as Record<string, unknown>)['reportType'] : undefined,
  );
  if (!type) throw badField('reportType must be one of submit, resubmit, disregard', 'reportType');
  return type;
}

/**
 * Another tax report of an invoice (beyond the contract, which has the gateway report every invoice by itself): a
 * submit again after a first report that was not accepted, a resubmit (R) or a disregard (D)
 * (src/reporting/tax-report-request.ts); the report's run ends in TaxReportSent or TaxReportError.
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
      res.status(202).json(await requestTaxReport(deps.workflows, deps.taxReporting, doc, reportType));
    });
}
