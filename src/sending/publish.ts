import { sendTransition } from '../core/document-states';
import { invoiceSentEvent } from '../documents/events';
import type { PublishedDocumentEvent, SendEventInput } from '../../workflows/contracts/send-invoice';
import type { SendInvoiceDeps } from './ports';

/**
 * InvoiceSent, InvoiceSentRetry or InvoiceSentError: the record's entry for the topic's transition (keyed per topic,
 * and per attempt for retries), then the event, built from what the workflow carries. The event id comes from the
 * workflow: a retried activity writes and publishes once.
 */
export async function publishSendEvent(deps: SendInvoiceDeps, input: SendEventInput): Promise<PublishedDocumentEvent> {
  await deps.documents.recordTransition(input.tenantId, input.documentId, sendTransition(input.topic), {
    generation: input.generation,
    attempt: input.attempt ?? 0,
    detail: input.message,
    ...(input.channel !== undefined ? { channel: input.channel } : {}),
    ...(input.nextAttemptOn !== undefined ? { nextAttemptOn: new Date(input.nextAttemptOn) } : {}),
  });
  const { event } = await deps.events.publishEvent(invoiceSentEvent(input));
  return { eventId: event.id, label: event.label };
}
