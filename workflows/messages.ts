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
}

export type DetectionOutcome =
  | { ok: true; format: DetectedFormatSummary }
  | { ok: false; code: string; message: string };

export interface SendInvoiceResult {
  documentId: string;
  state: string;
  detection: DetectionOutcome;
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
