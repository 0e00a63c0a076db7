import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { RetrySchedule } from '../src/core/retry-schedule';
import { DocumentKind, startSearchAttributes } from './contracts/search-attributes';
import { indexed } from './run-search';
import {
  REPORT_TAX_WORKFLOW,
  reportTaxWorkflowId,
  type ReportTaxInput,
  type TaxReportingSettings,
} from './contracts/report-tax';

/**
 * Starts a document's own run that outlives this one (ABANDON: an MLS or a tax report retries on the Peppol schedule
 * for days), once per id (REJECT_DUPLICATE: when it exists already, nothing else is started). The document search
 * attributes (tenant, document, `kind`) go on it when this run has them (the server then knows the keys). True when
 * this call started it.
 */
export async function startDocumentRun<A>(
  workflowType: string,
  workflowId: string,
  doc: { tenantId: string; documentId: string; kind: string },
  input: A,
): Promise<boolean> {
  try {
    await startChild(workflowType, {
      workflowId,
      args: [input],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      ...(indexed() ? { typedSearchAttributes: startSearchAttributes(doc) } : {}),
    });
    return true;
  } catch (e) {
    if (e instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw e;
  }
}

/**
 * Starts the document's reportTax run beside its delivery or registration: a failing tax authority never touches
 * this run, and a resend or a replayed start finds the one report run and starts nothing.
 */
export async function startTaxReport(
  doc: { tenantId: string; documentId: string; direction: ReportTaxInput['direction'] },
  settings: TaxReportingSettings,
  peppolSchedule?: RetrySchedule,
): Promise<{ workflowId: string; started: boolean }> {
  const workflowId = reportTaxWorkflowId(doc.tenantId, doc.documentId);
  const input: ReportTaxInput = {
    ...doc,
    acknowledgementTimeoutMs: settings.acknowledgementTimeoutMs,
    ...(peppolSchedule ? { peppolSchedule } : {}),
  };
  const started = await startDocumentRun(
    REPORT_TAX_WORKFLOW,
    workflowId,
    { ...doc, kind: DocumentKind.TaxReport },
    input,
  );
  return { workflowId, started };
}
