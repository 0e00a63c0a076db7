import { PEPPOL_SEND_SCHEDULE } from '../src/core/retry-schedule';
import { deliverySteps, documentSteps } from './activity-stubs';
import { attemptOnPeppolSchedule } from './peppol-schedule';
import { searchProgress } from './run-search';
import type {
  OrderResponseTopic,
  SendOrderResponseInput,
  SendOrderResponseResult,
} from './contracts/send-order-response';

const TOPICS = {
  sent: 'OrderResponseSent',
  retry: 'OrderResponseSentRetry',
  error: 'OrderResponseSentError',
} as const satisfies Record<string, OrderResponseTopic>;

/**
 * Sends one Order Response (BIS Ordering 3, T76) of a seller to the buyer of a received order over Peppol AS4, on the
 * Peppol retry schedule: OrderResponseSent on a receipt, OrderResponseSentRetry per temporary failure,
 * OrderResponseSentError on a refusal, an order that cannot be answered or the exhausted schedule.
 */
export async function sendOrderResponse(input: SendOrderResponseInput): Promise<SendOrderResponseResult> {
  const { peppolSchedule: _schedule, ...what } = input;
  const run = await attemptOnPeppolSchedule(
    input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE,
    (attempt, firstAttemptAt) => deliverySteps.sendOrderResponseAttempt({ ...what, attempt, firstAttemptAt }),
    (sent, event, fields) =>
      documentSteps.publishOrderResponseEvent({
        tenantId: input.tenantId,
        documentId: input.documentId,
        responseDocumentId: sent.responseDocumentId,
        responseCode: input.responseCode,
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
