/** The sendMessageLevelStatus workflow's contract: one MLS for one received document, sent over Peppol AS4. */
import type { RetrySchedule } from '../../src/core/retry-schedule';

export const SEND_MLS_WORKFLOW = 'sendMessageLevelStatus';

/** One run per received document: Peppol allows one MLS per business document. */
export function sendMlsWorkflowId(tenantId: string, documentId: string): string {
  return `send-mls:${tenantId}:${documentId}`;
}

export type MlsStatusCode = 'AP' | 'AB' | 'RE';
export type MlsReasonCode = 'FD' | 'SV' | 'BV' | 'BW';

export interface MlsLineSpec {
  reasonCode: MlsReasonCode;
  description: string;
  ruleId?: string;
  location?: string;
}

export interface SendMlsInput {
  tenantId: string;
  /** The received document the MLS answers. */
  documentId: string;
  responseCode: MlsStatusCode;
  description?: string;
  /** Only for RE. */
  lines?: MlsLineSpec[];
  /** Who asked: the v1-beta response endpoint, or the receive run's MLS policy. */
  requestedBy: 'api' | 'policy';
  /** PEPPOL_SEND_RETRY_SCHEDULE, fixed at start. */
  peppolSchedule?: RetrySchedule;
}

/** One attempt's input (the activity's): the run's input, the attempt number and the first attempt's time. */
export interface SendMlsAttempt extends Omit<SendMlsInput, 'peppolSchedule' | 'requestedBy'> {
  attempt: number;
  firstAttemptAt: string;
}

export interface SendMlsAttemptResult {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  mlsDocumentId: string;
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
}

export interface MlsSentEventInput {
  tenantId: string;
  documentId: string;
  mlsDocumentId: string;
  responseCode: MlsStatusCode;
  description?: string;
  attempt: number;
  messageId: string;
  to: string;
  eventId: string;
}

export interface SendMlsResult {
  outcome: 'sent' | 'refused' | 'exhausted';
  mlsDocumentId: string;
  attempts: number;
  reason?: string;
  eventId?: string;
}
