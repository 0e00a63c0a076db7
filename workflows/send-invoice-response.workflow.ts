import { PEPPOL_SEND_SCHEDULE } from '../src/core/retry-schedule';
import { deliverySteps, documentSteps } from './activity-stubs';
import { attemptOnPeppolSchedule } from './peppol-schedule';
import { searchProgress } from './run-search';
import type {
  InvoiceResponseTopic,
  SendInvoiceResponseInput,
  SendInvoiceResponseResult,
} from './contracts/send-invoice-response';

const TOPICS = {
  sent: 'InvoiceResponseSent',
  retry: 'InvoiceResponseSentRetry',
  error: 'InvoiceResponseSentError',
} as const satisfies Record<string, InvoiceResponseTopic>;

/**
 * Sends one Invoice Response (BIS Invoice Response 3) of a buyer to the supplier of a received invoice over Peppol
 * AS4, on the Peppol retry schedule (./peppol-schedule.ts): InvoiceResponseSent on a receipt, InvoiceResponseSentRetry
 * per temporary failure, InvoiceResponseSentError on a refusal, a document that cannot be answered or the exhausted
 * schedule. Every attempt is the same message (ids and issue time fixed by the document, the status and the first
 * attempt).
 */
export async function sendInvoiceResponse(input: SendInvoiceResponseInput): Promise<SendInvoiceResponseResult> {
  const { peppolSchedule: _schedule, ...what } = input;
  const run = await attemptOnPeppolSchedule(
    input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE,
    (attempt, firstAttemptAt) => deliverySteps.sendInvoiceResponseAttempt({ ...what, attempt, firstAttemptAt }),
    (sent, event, fields) =>
      documentSteps.publishInvoiceResponseEvent({
        tenantId: input.tenantId,
        documentId: input.documentId,
        responseDocumentId: sent.responseDocumentId,
        statusCode: input.statusCode,
        topic: TOPICS[event],
        ...fields,
      }),
  );
  searchProgress({ outcome: run.outcome === 'sent' ? TOPICS.sent : TOPICS.error });
  return {
    outcome: run.outcome,
    responseDocumentId: run.last.responseDocumentId,
    attempts: run.attempts,
    ...(run.reason !== undefined ? { reason: run.reason } : {}),
    eventId: run.eventId,
  };
}
