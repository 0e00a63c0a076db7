import { uuid4 } from '@temporalio/workflow';
import { PEPPOL_SEND_SCHEDULE } from '../src/core/retry-schedule';
import { deliverySteps, documentSteps, validationSteps } from './activity-stubs';
import { attemptOnPeppolSchedule } from './peppol-schedule';
import { searchProgress } from './run-search';
import { DocumentState } from '../src/core/document-states';
import type { OrderSentTopic, SendOrderInput, SendOrderResult } from './contracts/send-order';

const TOPICS = {
  sent: 'OrderSent',
  retry: 'OrderSentRetry',
  error: 'OrderSentError',
} as const satisfies Record<string, OrderSentTopic>;

/**
 * One run per uploaded purchase order: the check (detection as a Peppol Order 3, the pinned official rules, the buyer
 * the uploading party may act for, a seller address), then the attempts over Peppol AS4 to the seller on the Peppol
 * retry schedule: OrderSent on a receipt, OrderSentRetry per temporary failure, OrderSentError on a refused check, a
 * refusal or the exhausted schedule. No channels: an order goes over Peppol only.
 */
export async function sendOrder(input: SendOrderInput): Promise<SendOrderResult> {
  const ids = { tenantId: input.tenantId, documentId: input.documentId };
  const checked = await validationSteps.checkOrder(ids);
  if (!checked.ok) {
    const eventId = uuid4();
    await documentSteps.publishOrderEvent({
      ...ids,
      topic: 'OrderSentError',
      attempt: 0,
      to: '',
      endpoint: '',
      messageId: '',
      reason: checked.reason,
      stage: checked.stage,
      reasonCode: checked.reasonCode,
      eventId,
    });
    searchProgress({ state: DocumentState.InvoiceSentError, outcome: TOPICS.error });
    return { outcome: 'invalid', attempts: 0, reason: checked.reason, eventId };
  }
  const run = await attemptOnPeppolSchedule(
    input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE,
    (attempt, firstAttemptAt) => deliverySteps.sendOrderAttempt({ ...ids, attempt, firstAttemptAt }),
    (_sent, event, fields) => documentSteps.publishOrderEvent({ ...ids, topic: TOPICS[event], ...fields }),
    true,
  );
  searchProgress({ outcome: run.outcome === 'sent' ? TOPICS.sent : TOPICS.error });
  return {
    outcome: run.outcome,
    attempts: run.attempts,
    ...(run.reason !== undefined ? { reason: run.reason } : {}),
    eventId: run.eventId,
  };
}
