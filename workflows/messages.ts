/** Workflow names and payload types shared by the API (starter) and the worker. No runtime imports beyond types. */

import type { RetrySchedule } from '../src/core/retry-schedule';

export const SEND_INVOICE_WORKFLOW = 'sendInvoice';

export interface SendInvoiceInput {
  tenantId: string;
  documentId: string;
  /**
   * Waits between failed Peppol delivery attempts, fixed when the run starts (PEPPOL_SEND_RETRY_SCHEDULE of the API
   * process). Absent (runs started before it existed, or a starter without one): PEPPOL_SEND_SCHEDULE.
   */
  peppolSchedule?: RetrySchedule;
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
  { ok: true; format: DetectedFormatSummary } | { ok: false; code: string; message: string };

export interface ValidateDocumentInput extends SendInvoiceInput {
  /** The format detection found; validation judges the same one. */
  formatId: string;
}

export type ValidationOutcome =
  | { kind: 'valid'; warnings: number; ruleSets: string[] }
  | { kind: 'invalid'; errors: number; reasonCodes: string[]; summary: string }
  | { kind: 'not-validated'; reason: string };

/** Which step of sendInvoice an InvoiceSent* event comes from. */
export type SendStage = 'detection' | 'validation' | 'configuration' | 'recipient' | 'lookup' | 'delivery';

/** Ends a sales invoice in InvoiceSentError and publishes the event. */
export interface FailSendInput extends SendInvoiceInput {
  /** Workflow-made, so a retried publish is the same event. */
  eventId: string;
  /** Which step ended it. */
  stage: SendStage;
  /** Spec 7 cause text, e.g. `Invalid payload: ...`. */
  message: string;
  /** SV / BV (validation) or the detection error code. */
  reasonCode: string;
  recipient?: string;
  attempt?: number;
}

export type SendTopic = 'InvoiceSent' | 'InvoiceSentRetry' | 'InvoiceSentError';

/** One InvoiceSent* event with what is known at that point (spec 6.3 details); the record's state follows the topic. */
export interface SendEventInput extends SendInvoiceInput {
  topic: SendTopic;
  eventId: string;
  message: string;
  stage: SendStage;
  reasonCode?: string;
  /** Buyer participant, `<icd>:<id>`. */
  recipient?: string;
  /** The receiving AS4 endpoint URL. */
  endpoint?: string;
  messageId?: string;
  attempt?: number;
  /** The Peppol document type the document went (or was to go) as. */
  targetDocumentTypeId?: string;
}

export interface PeppolIdentifier {
  scheme: string;
  value: string;
}

/** Where and how one sales invoice is delivered: the invoice's addresses and the recipient's checked SMP endpoint. */
export interface PeppolRoute {
  sender: PeppolIdentifier;
  receiver: PeppolIdentifier;
  countryC1: string;
  documentType: PeppolIdentifier;
  process: PeppolIdentifier;
  smpUrl: string;
  endpointUrl: string;
  /** The receiving AP certificate, base64 DER (encryption target; the receipt must be signed by its Seat ID). */
  receiverCertificate: string;
  /** Set when the recipient does not take the document's own format: what it is converted to before sending. */
  transform?: {
    /** Target format id (src/transform). */
    targetFormat: string;
    targetName: string;
    /** Elements the conversion could not carry over (unmapped + not carried); 0 for a lossless conversion. */
    notCarried: number;
  };
}

export type ResolveRecipientOutcome =
  | { kind: 'found'; route: PeppolRoute }
  /** `retryable`: the SML or SMP could not be asked (not the recipient's answer); a later attempt may succeed. */
  | { kind: 'refused'; retryable: boolean; stage: SendStage; reasonCode: string; message: string; recipient?: string };

export interface SendPeppolInput extends SendInvoiceInput {
  route: PeppolRoute;
  /** 1-based. */
  attempt: number;
  /** ISO time of the first attempt: every attempt is the same AS4 message (ids and timestamp), see message-ids.ts. */
  firstAttemptAt: string;
}

export interface SendPeppolOutcome {
  /** `duplicate`: the receiver already has this message (an earlier attempt's answer was lost). */
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  messageId: string;
  endpoint: string;
  httpStatus?: number;
  reason?: string;
  receiptMessageId?: string;
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
  /** The event that announced the final state (InvoiceSent or InvoiceSentError). */
  event?: PublishedDocumentEvent;
  /** Peppol delivery: attempts made and the AS4 message. */
  delivery?: { attempts: number; messageId?: string; endpoint?: string };
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
  /** The party's purchase document made of the message (runs recorded before that step have none). */
  received?: ReceivedDocumentOutcome;
}

export interface ReceivedDocumentInput extends ReceiveDocumentInput {
  detection: DetectionOutcome;
  /** Id of the event to publish (from the workflow, so a retried step publishes the same event). */
  eventId: string;
}

export interface ReceivedDocumentOutcome {
  documentId: string;
  state: string;
  /** The event published (InvoiceReceived / InvoiceReceivedError); none for other document kinds. */
  eventId?: string;
  topic?: string;
}
