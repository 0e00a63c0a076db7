import { patched, uuid4 } from '@temporalio/workflow';
import type { SendInvoiceInput, SendInvoiceResult } from './messages';
import { documentSteps, validationSteps } from './activity-stubs';
import { DocumentState } from '../src/core/document-states';

/** Patch marker: runs recorded before the validation step replay without it. */
export const VALIDATION_STEP_PATCH = 'send-invoice-validation-step';

/**
 * One run per uploaded sales invoice; the workflow id is the business key (tenant + documentId). Carries ids only:
 * the bytes stay in storage (payload limits). Steps: detect → validate; a refused format or an invalid payload ends
 * in InvoiceSentError with its event (spec 3, 7). Steps that are not built yet are not in this workflow.
 */
export async function sendInvoice(input: SendInvoiceInput): Promise<SendInvoiceResult> {
  const detection = await documentSteps.detectDocumentFormat(input);
  if (!patched(VALIDATION_STEP_PATCH)) {
    return { documentId: input.documentId, state: detection.ok ? DocumentState.Detected : DocumentState.Rejected, detection };
  }

  if (!detection.ok) {
    const event = await documentSteps.failSend({
      ...input,
      eventId: uuid4(),
      stage: 'detection',
      message: `Invalid payload: ${detection.message}`,
      reasonCode: detection.code,
    });
    return { documentId: input.documentId, state: DocumentState.InvoiceSentError, detection, event };
  }

  const validation = await validationSteps.validateDocument({ ...input, formatId: detection.format.id });
  if (validation.kind === 'invalid') {
    const event = await documentSteps.failSend({
      ...input,
      eventId: uuid4(),
      stage: 'validation',
      message: `Invalid payload: ${validation.summary}`,
      reasonCode: validation.reasonCodes.join(','),
    });
    return { documentId: input.documentId, state: DocumentState.InvoiceSentError, detection, validation, event };
  }
  return {
    documentId: input.documentId,
    state: validation.kind === 'valid' ? DocumentState.Validated : DocumentState.NotValidated,
    detection,
    validation,
  };
}
