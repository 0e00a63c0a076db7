/** Workflow names and payload types shared by the API (starter) and the worker. No runtime imports beyond types. */

export const SEND_INVOICE_WORKFLOW = 'sendInvoice';

export interface SendInvoiceInput {
  tenantId: string;
  documentId: string;
}

export interface DetectedFormatSummary {
  id: string;
  name: string;
  syntax: string;
  documentType: string;
  customizationId?: string;
  profileId?: string;
  /** Peppol document type identifier value, where the format has one. */
  documentTypeId?: string;
}

export type DetectionOutcome =
  | { ok: true; format: DetectedFormatSummary }
  | { ok: false; code: string; message: string };

export interface ValidateDocumentInput extends SendInvoiceInput {
  /** The format detection found; validation judges the same one. */
  formatId: string;
}

export type ValidationOutcome =
  | { kind: 'valid'; warnings: number; ruleSets: string[] }
  | { kind: 'invalid'; errors: number; reasonCodes: string[]; summary: string }
  | { kind: 'not-validated'; reason: string };

/** Ends a sales invoice in InvoiceSentError and publishes the event. */
export interface FailSendInput extends SendInvoiceInput {
  /** Workflow-made, so a retried publish is the same event. */
  eventId: string;
  /** Which step ended it. */
  stage: 'detection' | 'validation';
  /** Spec 7 cause text, e.g. `Invalid payload: ...`. */
  message: string;
  /** SV / BV (validation) or the detection error code. */
  reasonCode: string;
  recipient?: string;
  attempt?: number;
}

export interface PublishedDocumentEvent {
  eventId: string;
  label: string;
}

export interface SendInvoiceResult {
  documentId: string;
  state: string;
  detection: DetectionOutcome;
  validation?: ValidationOutcome;
  /** The event that announced a final error state. */
  event?: PublishedDocumentEvent;
}

export const RECEIVE_DOCUMENT_WORKFLOW = 'receiveDocument';

/** A Peppol AS4 message this access point received and stored (`as4inbound`, keyed by the AS4 MessageId). */
export interface ReceiveDocumentInput {
  tenantId: string;
  messageId: string;
}

export interface ReceiveDocumentResult {
  messageId: string;
  state: string;
  detection: DetectionOutcome;
}
