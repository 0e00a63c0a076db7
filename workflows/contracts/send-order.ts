/**
 * The sendOrder workflow's contract: one uploaded Peppol BIS Ordering 3 Order of a buyer (our party), checked
 * (detection, the pinned official rules, the buyer check) and sent over Peppol AS4 to its seller. One run per
 * uploaded document.
 */
import type { RetrySchedule } from '../../src/core/retry-schedule';

export const SEND_ORDER_WORKFLOW = 'sendOrder';

export function sendOrderWorkflowId(tenantId: string, documentId: string): string {
  return `send-order:${tenantId}:${documentId}`;
}

export interface SendOrderInput {
  tenantId: string;
  /** The uploaded order. */
  documentId: string;
  /** PEPPOL_SEND_RETRY_SCHEDULE, fixed at start. */
  peppolSchedule?: RetrySchedule;
}

/** The check before the first attempt: the order may go, or why not (the stage that refused it). */
export type CheckOrderResult =
  | { ok: true; orderId: string }
  | { ok: false; stage: 'detection' | 'validation' | 'sender' | 'routing'; reasonCode: string; reason: string };

export interface SendOrderAttempt {
  tenantId: string;
  documentId: string;
  attempt: number;
  /** ISO time of the first attempt: the SBDH creation time and AS4 timestamp of every attempt. */
  firstAttemptAt: string;
}

export interface SendOrderAttemptResult {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  /** The seller (`iso6523-actorid-upis::…`) and its AS4 endpoint (empty when not found). */
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
}

export type OrderSentTopic = 'OrderSent' | 'OrderSentRetry' | 'OrderSentError';

export interface OrderEventInput {
  tenantId: string;
  documentId: string;
  topic: OrderSentTopic;
  /** 0: refused before any attempt (the check). */
  attempt: number;
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
  /** The check's stage and reason code when it refused the order. */
  stage?: string;
  reasonCode?: string;
  /** A retry: when the next attempt is due (ISO). */
  nextAttemptOn?: string;
  eventId: string;
}

export interface SendOrderResult {
  outcome: 'sent' | 'invalid' | 'refused' | 'exhausted';
  attempts: number;
  reason?: string;
  eventId: string;
}
