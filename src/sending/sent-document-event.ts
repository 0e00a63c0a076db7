/**
 * The events of a document sent outside the sendInvoice run (an uploaded order, an Invoice Response, an Order
 * Response): `<Kind>Sent`, `<Kind>SentRetry`, `<Kind>SentError` with InvoiceSent's structure (spec 6.3). A retry and
 * a final error also go on the sent document's history (when it was stored). The event id comes from the workflow,
 * so a retried step publishes once.
 */
import { Transition } from '../core/document-states';
import type { DocumentStore } from '../documents/loader';
import type { DirectoryRepository } from '../storage/directory.repository';
import type { EventSink } from './ports';

export interface SentDocumentEventDeps extends DocumentStore {
  directory: Pick<DirectoryRepository, 'findParty'>;
  events: EventSink;
}

export interface SentDocumentEvent {
  eventId: string;
  tenantId: string;
  topic: string;
  kind: 'sent' | 'retry' | 'error';
  /** The document sent (the event's documentId), and whether it is stored (its history gets retries and errors). */
  documentId: string;
  stored: boolean;
  /** The document it answers, if any (the event's refToDocumentId). */
  refToDocumentId?: string;
  /** Whose it is: the party the event names (when of this tenant). */
  partyId: string;
  /** How the message names the document, e.g. `Order response AP (Accepted) for order <id>`. */
  what: string;
  /** The word of a final error: `could not be delivered`, `not sent`. */
  failed: string;
  attempt: number;
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
  nextAttemptOn?: string;
  /** The topic's own details, after the common ones. */
  details: Record<string, string>;
}

/** `…Sent` → sent, `…SentRetry` → retry, `…SentError` → error. */
export function sentEventKind(topic: string): SentDocumentEvent['kind'] {
  return topic.endsWith('Retry') ? 'retry' : topic.endsWith('Error') ? 'error' : 'sent';
}

export async function publishSentDocumentEvent(
  deps: SentDocumentEventDeps,
  e: SentDocumentEvent,
): Promise<{ eventId: string }> {
  if (e.stored && e.kind === 'retry') {
    await deps.documents.recordTransition(e.tenantId, e.documentId, Transition.retry, {
      attempt: e.attempt,
      detail: e.reason ?? 'retry',
      ...(e.nextAttemptOn ? { nextAttemptOn: new Date(e.nextAttemptOn) } : {}),
    });
  }
  if (e.stored && e.kind === 'error') {
    await deps.documents.recordTransition(e.tenantId, e.documentId, Transition.sendError, {
      detail: e.reason ?? 'not delivered',
    });
  }
  const party = await deps.directory.findParty(e.partyId);
  const message =
    e.kind === 'sent'
      ? `${e.what} delivered to ${e.to}`
      : e.kind === 'retry'
        ? `${e.what} not delivered yet (attempt ${e.attempt}): ${e.reason ?? ''}; next attempt ${e.nextAttemptOn ?? ''}`
        : `${e.what} ${e.failed}${e.to ? ` to ${e.to}` : ''}: ${e.reason ?? ''}`;
  const { event } = await deps.events.publishEvent({
    id: e.eventId,
    tenantId: e.tenantId,
    topic: e.topic,
    party:
      party && party.tenantId === e.tenantId ? { partyId: party.partyId, legalEntityId: party.legalEntityId } : null,
    documentId: e.documentId,
    ...(e.refToDocumentId !== undefined ? { refToDocumentId: e.refToDocumentId } : {}),
    message: message.slice(0, 2000),
    details: {
      id: e.documentId,
      recipient: e.to,
      endpoint: e.endpoint,
      protocol: e.endpoint ? 'peppol' : '',
      attempt: String(e.attempt),
      messageId: e.messageId,
      ...e.details,
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
      ...(e.nextAttemptOn !== undefined ? { nextAttemptOn: e.nextAttemptOn } : {}),
    },
    createdBy: 'api',
  });
  return { eventId: event.id };
}
