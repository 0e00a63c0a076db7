import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { RetrySchedule } from '../src/core/retry-schedule';
import { DocumentIdAttribute, TenantIdAttribute } from './contracts/search-attributes';
import {
  REPORT_TAX_WORKFLOW,
  reportTaxWorkflowId,
  type ReportTaxInput,
  type TaxReportingSettings,
} from './contracts/report-tax';
import type { reportTax } from './report-tax.workflow';

/**
 * Starts the document's reportTax run beside its delivery or registration: it outlives this run (its submission
 * retries on the Peppol schedule, then it waits for the authority's MLS) and a failing tax authority never touches
 * this run. One per document (REJECT_DUPLICATE): a resend or a replayed start finds it and starts nothing.
 */
export async function startTaxReport(
  doc: { tenantId: string; documentId: string; direction: ReportTaxInput['direction'] },
  settings: TaxReportingSettings,
  peppolSchedule?: RetrySchedule,
): Promise<{ workflowId: string; started: boolean }> {
  const workflowId = reportTaxWorkflowId(doc.tenantId, doc.documentId);
  const indexed = workflowInfo().typedSearchAttributes.get(TenantIdAttribute) !== undefined;
  try {
    await startChild<typeof reportTax>(REPORT_TAX_WORKFLOW, {
      workflowId,
      args: [
        {
          ...doc,
          acknowledgementTimeoutMs: settings.acknowledgementTimeoutMs,
          ...(peppolSchedule ? { peppolSchedule } : {}),
        },
      ],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      ...(indexed
        ? {
            typedSearchAttributes: [
              { key: TenantIdAttribute, value: doc.tenantId },
              { key: DocumentIdAttribute, value: doc.documentId },
            ],
          }
        : {}),
    });
    return { workflowId, started: true };
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return { workflowId, started: false };
    throw e;
  }
}
