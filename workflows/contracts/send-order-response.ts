/**
 * The sendOrderResponse workflow's contract: one Peppol BIS Order Response 3 (T76) from the seller (our party) to the
 * buyer of a received order, sent over Peppol AS4. One run per (received order, response code).
 */
import type { RetrySchedule } from '../../src/core/retry-schedule';

export const SEND_ORDER_RESPONSE_WORKFLOW = 'sendOrderResponse';

export type OrderResponseStatus = 'AB' | 'AP' | 'RE' | 'CA';
export type OrderLineStatus = '1' | '3' | '5' | '7' | '42';

export function sendOrderResponseWorkflowId(tenantId: string, documentId: string, status: string): string {
  return `send-order-response:${tenantId}:${documentId}:${status}`;
}

/** The answer to one order line (CA only). */
export interface OrderLineAnswerSpec {
  lineId: string;
  statusCode: OrderLineStatus;
  quantity?: string;
  note?: string;
}

export interface SendOrderResponseInput {
  tenantId: string;
  /** The received order answered. */
  documentId: string;
  responseCode: OrderResponseStatus;
  note?: string;
  lines?: OrderLineAnswerSpec[];
  /** PEPPOL_SEND_RETRY_SCHEDULE, fixed at start. */
  peppolSchedule?: RetrySchedule;
}

export interface SendOrderResponseAttempt extends Omit<SendOrderResponseInput, 'peppolSchedule'> {
  attempt: number;
  /** ISO time of the first attempt: the response's issue time and the AS4 timestamp of every attempt. */
  firstAttemptAt: string;
}

export interface SendOrderResponseAttemptResult {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  /** The stored response document (the events' documentId). */
  responseDocumentId: string;
  /** The buyer (`iso6523-actorid-upis::…`) and its AS4 endpoint (empty when not found). */
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
}

export type OrderResponseTopic = 'OrderResponseSent' | 'OrderResponseSentRetry' | 'OrderResponseSentError';

export interface OrderResponseEventInput {
  tenantId: string;
  documentId: string;
  responseDocumentId: string;
  responseCode: OrderResponseStatus;
  topic: OrderResponseTopic;
  attempt: number;
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
  nextAttemptOn?: string;
  eventId: string;
}

export interface SendOrderResponseResult {
  outcome: 'sent' | 'refused' | 'exhausted';
  responseDocumentId: string;
  attempts: number;
  reason?: string;
  eventId?: string;
}
