import type { SendInvoiceInput, SendInvoiceResult } from './messages';
import { documentSteps } from './activity-stubs';
import { DocumentState } from '../src/core/document-states';

/**
 * One run per uploaded sales invoice; the workflow id is the business key (tenant + documentId). Carries ids only:
 * the bytes stay in storage (payload limits). Steps that are not built yet are not in this workflow.
 */
export async function sendInvoice(input: SendInvoiceInput): Promise<SendInvoiceResult> {
  const detection = await documentSteps.detectDocumentFormat(input);
  return {
    documentId: input.documentId,
    state: detection.ok ? DocumentState.Detected : DocumentState.Rejected,
    detection,
  };
}
