/**
 * The sendInvoiceResponse workflow's contract: one Peppol BIS Invoice Response 3 from the buyer (our party) to the
 * supplier of a received invoice, sent over Peppol AS4. One run per (received invoice, status): a buyer answers an
 * invoice in steps (AB, IP, then AP and PD, or UQ / RE), each status once.
 */
import type { RetrySchedule } from '../../src/core/retry-schedule';

export const SEND_INVOICE_RESPONSE_WORKFLOW = 'sendInvoiceResponse';

export type InvoiceResponseStatus = 'AB' | 'IP' | 'UQ' | 'RE' | 'AP' | 'PD';

export function sendInvoiceResponseWorkflowId(tenantId: string, documentId: string, status: string): string {
  return `send-invoice-response:${tenantId}:${documentId}:${status}`;
}

/** A clarification (code list OPStatusReason or OPStatusAction) with its optional text. */
export interface InvoiceResponseClarificationSpec {
  code: string;
  text?: string;
}

export interface SendInvoiceResponseInput {
  tenantId: string;
  /** The received (purchase) invoice answered. */
  documentId: string;
  statusCode: InvoiceResponseStatus;
  note?: string;
  reasons?: InvoiceResponseClarificationSpec[];
  actions?: InvoiceResponseClarificationSpec[];
  /** PEPPOL_SEND_RETRY_SCHEDULE, fixed at start. */
  peppolSchedule?: RetrySchedule;
}

/** One attempt's input (the activity's): the run's input, the attempt number and the first attempt's time. */
export interface SendInvoiceResponseAttempt extends Omit<SendInvoiceResponseInput, 'peppolSchedule'> {
  attempt: number;
  /** ISO time of the first attempt: the response's issue time and the AS4 timestamp of every attempt. */
  firstAttemptAt: string;
}

export interface SendInvoiceResponseAttemptResult {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  /** The stored response document (the events' documentId). */
  responseDocumentId: string;
  /** The supplier (`iso6523-actorid-upis::…`) and its AS4 endpoint (empty when not found). */
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
}

export type InvoiceResponseTopic = 'InvoiceResponseSent' | 'InvoiceResponseSentRetry' | 'InvoiceResponseSentError';

export interface InvoiceResponseEventInput {
  tenantId: string;
  documentId: string;
  responseDocumentId: string;
  statusCode: InvoiceResponseStatus;
  topic: InvoiceResponseTopic;
  attempt: number;
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
  /** A retry: when the next attempt is due (ISO). */
  nextAttemptOn?: string;
  eventId: string;
}

export interface SendInvoiceResponseResult {
  outcome: 'sent' | 'refused' | 'exhausted';
  responseDocumentId: string;
  attempts: number;
  reason?: string;
  eventId?: string;
}
