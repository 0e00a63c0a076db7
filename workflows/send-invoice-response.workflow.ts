import { sleep, uuid4 } from '@temporalio/workflow';
import { PEPPOL_SEND_SCHEDULE, nextDelay } from '../src/core/retry-schedule';
import { deliverySteps, documentSteps } from './activity-stubs';
import type {
  InvoiceResponseEventInput,
  SendInvoiceResponseAttemptResult,
  SendInvoiceResponseInput,
  SendInvoiceResponseResult,
} from './contracts/send-invoice-response';

/**
 * Sends one Invoice Response (BIS Invoice Response 3) of a buyer to the supplier of a received invoice over Peppol
 * AS4, on the Peppol retry schedule: a receipt (or the peer's "already have it") publishes InvoiceResponseSent; a
 * temporary failure (5xx, no answer, SMP unreachable) publishes InvoiceResponseSentRetry and tries again; a refusal,
 * a document that cannot be answered or the exhausted schedule publishes InvoiceResponseSentError. Every attempt is
 * the same message (ids and issue time fixed by the document, the status and the first attempt).
 */
export async function sendInvoiceResponse(input: SendInvoiceResponseInput): Promise<SendInvoiceResponseResult> {
  const schedule = input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE;
  const startedAt = Date.now();
  const firstAttemptAt = new Date(startedAt).toISOString();
  const { peppolSchedule: _schedule, ...what } = input;
  let previous: number | undefined;
  for (let attempt = 1; ; attempt++) {
    const sent = await deliverySteps.sendInvoiceResponseAttempt({ ...what, attempt, firstAttemptAt });
    if (sent.outcome === 'delivered' || sent.outcome === 'duplicate') {
      const eventId = await publish(input, sent, 'InvoiceResponseSent', attempt);
      return { outcome: 'sent', responseDocumentId: sent.responseDocumentId, attempts: attempt, eventId };
    }
    const reason = sent.reason ?? sent.outcome;
    if (sent.outcome === 'failed') {
      const eventId = await publish(input, sent, 'InvoiceResponseSentError', attempt, { reason });
      return { outcome: 'refused', responseDocumentId: sent.responseDocumentId, attempts: attempt, reason, eventId };
    }
    const delay = nextDelay(schedule, attempt, Date.now() - startedAt, undefined, Math.random, previous);
    if (delay === null) {
      const eventId = await publish(input, sent, 'InvoiceResponseSentError', attempt, {
        reason: `no delivery after ${attempt} attempts: ${reason}`,
      });
      return { outcome: 'exhausted', responseDocumentId: sent.responseDocumentId, attempts: attempt, reason, eventId };
    }
    const nextAttemptOn = new Date(Date.now() + delay).toISOString();
    await publish(input, sent, 'InvoiceResponseSentRetry', attempt, { reason, nextAttemptOn });
    previous = delay;
    await sleep(delay);
  }
}

async function publish(
  input: SendInvoiceResponseInput,
  sent: SendInvoiceResponseAttemptResult,
  topic: InvoiceResponseEventInput['topic'],
  attempt: number,
  extra: { reason?: string; nextAttemptOn?: string } = {},
): Promise<string> {
  const eventId = uuid4();
  await documentSteps.publishInvoiceResponseEvent({
    tenantId: input.tenantId,
    documentId: input.documentId,
    responseDocumentId: sent.responseDocumentId,
    statusCode: input.statusCode,
    topic,
    attempt,
    to: sent.to,
    endpoint: sent.endpoint,
    messageId: sent.messageId,
    ...extra,
    eventId,
  });
  return eventId;
}
