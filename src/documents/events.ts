/**
 * The document-event builders, one per topic family: InvoiceSent* (sales invoices) and InvoiceReceived* (purchase
 * documents). Each turns what a step knows into the one publish input (spec 6.3 details: all strings); the topic and
 * the record's state come from the transition table (src/core/document-states.ts).
 */
import type { PublishEventInput } from '../webhooks/publish';
import type { SendEventInput } from '../../workflows/contracts/send-invoice';

/** An InvoiceSent, InvoiceSentRetry or InvoiceSentError event, from what the workflow carries (nothing is read). */
export function invoiceSentEvent(input: SendEventInput): PublishEventInput {
  const { facts } = input;
  const sent = input.endpoint !== undefined && input.endpoint !== '';
  return {
    id: input.eventId,
    tenantId: input.tenantId,
    topic: input.topic,
    party: facts.legalEntityId !== null ? { partyId: facts.partyId, legalEntityId: facts.legalEntityId } : null,
    documentId: input.documentId,
    message: input.message,
    details: {
      id: input.documentId,
      recipient: input.recipient ?? '',
      endpoint: input.endpoint ?? '',
      // Empty while nothing went out (refused before sending).
      protocol: sent ? (input.protocol ?? 'peppol') : '',
      attempt: String(input.attempt ?? 0),
      messageId: input.messageId ?? '',
      sourceDocumentTypeId: input.sourceDocumentTypeId ?? '',
      targetDocumentTypeId: input.targetDocumentTypeId ?? '',
      // Beyond the spec's fields (receivers ignore unknown ones): which step produced the event, and why.
      stage: input.stage,
      ...(input.channel !== undefined ? { channel: input.channel } : {}),
      ...(input.reasonCode !== undefined ? { reasonCode: input.reasonCode } : {}),
      ...(input.nextAttemptOn !== undefined ? { nextAttemptOn: input.nextAttemptOn } : {}),
    },
    createdBy: facts.createdBy,
  };
}

/** What the receive step knows when it tells the party about a received document. */
export interface ReceivedEventFacts {
  tenantId: string;
  eventId: string;
  documentId: string;
  /** The AS4 message it came in. */
  messageId: string;
  party: { partyId: string; legalEntityId: string } | null;
  /** The sending participant and the SBDH document type of the message. */
  sender: string;
  documentTypeId: string;
  detection:
    | { ok: true; format: { id: string; name: string; documentType: string } }
    | { ok: false; code: string; message: string };
}

/** An InvoiceReceived or InvoiceReceivedError event. */
export function invoiceReceivedEvent(
  topic: 'InvoiceReceived' | 'InvoiceReceivedError',
  f: ReceivedEventFacts,
): PublishEventInput {
  const { detection } = f;
  return {
    id: f.eventId,
    tenantId: f.tenantId,
    topic,
    party: f.party,
    documentId: f.documentId,
    message: detection.ok
      ? `${detection.format.documentType === 'CreditNote' ? 'Credit note' : 'Invoice'} received over Peppol ` +
        `from ${f.sender} (${detection.format.name})`
      : `A document received over Peppol from ${f.sender} could not be read: ${detection.message}`,
    details: {
      id: f.documentId,
      sender: f.sender,
      createdBy: 'peppol',
      documentTypeId: f.documentTypeId,
      // Beyond the spec's fields: the AS4 message it came in, for support.
      messageId: f.messageId,
      ...(detection.ok ? { formatId: detection.format.id } : { reasonCode: detection.code }),
    },
    createdBy: 'peppol',
  };
}
