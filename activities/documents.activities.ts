import { heartbeat } from '@temporalio/activity';
import { GatewayError } from '../src/core/gateway-error';
import { DocumentState, HistoryStep, retryKey } from '../src/core/document-states';
import type { BlobStore } from '../src/storage/blob-store';
import type { DirectoryRepository } from '../src/storage/directory.repository';
import type { DocumentRepository } from '../src/storage/document.repository';
import type { EventPublisher } from '../src/webhooks/publish';
import type {
  DetectionOutcome,
  FailSendInput,
  PublishedDocumentEvent,
  SendEventInput,
  SendInvoiceInput,
} from '../workflows/messages';
import { detectionOutcome } from './detection';

export interface DocumentActivityDeps {
  documents: DocumentRepository;
  blobs: BlobStore;
  directory: DirectoryRepository;
  maxDocumentBytes: number;
  /** The one publish path (webhooks); absent in processes that publish nothing, where the step then fails clearly. */
  webhooks?: { publisher: EventPublisher };
}

export function createDocumentActivities(deps: DocumentActivityDeps) {
  /**
   * The one place InvoiceSent* events are built (spec 6.3 details: all strings). The history entry is keyed per topic
   * (and per attempt for retries), the event id comes from the workflow: a retried activity writes and publishes once.
   */
  async function publishSendEvent(input: SendEventInput): Promise<PublishedDocumentEvent> {
    const publisher = deps.webhooks?.publisher;
    if (!publisher)
      throw new GatewayError(
        'NOT_IMPLEMENTED',
        'event publishing is not wired in this worker (ActivityDeps.webhooks missing)',
        { retryable: false },
      );
    const record = await deps.documents.find(input.tenantId, input.documentId);
    if (!record) throw new GatewayError('DOCUMENT_NOT_FOUND', `document ${input.documentId} not found`);
    const entry =
      input.topic === 'InvoiceSent'
        ? { state: DocumentState.Delivered, key: HistoryStep.delivered.key }
        : input.topic === 'InvoiceSentRetry'
          ? { state: DocumentState.Retrying, key: retryKey(input.attempt ?? 0) }
          : { state: DocumentState.InvoiceSentError, key: HistoryStep.sendError.key };
    await deps.documents.appendHistory(input.tenantId, input.documentId, { ...entry, detail: input.message });
    const party = await deps.directory.findParty(record.partyId);
    const sent = input.endpoint !== undefined && input.endpoint !== '';
    const { event } = await publisher.publishEvent({
      id: input.eventId,
      tenantId: input.tenantId,
      topic: input.topic,
      party:
        party && party.tenantId === input.tenantId
          ? { partyId: party.partyId, legalEntityId: party.legalEntityId }
          : null,
      documentId: input.documentId,
      message: input.message,
      details: {
        id: input.documentId,
        recipient: input.recipient ?? '',
        endpoint: input.endpoint ?? '',
        // Empty while nothing went over the network (refused before sending).
        protocol: sent ? 'peppol' : '',
        attempt: String(input.attempt ?? 0),
        messageId: input.messageId ?? '',
        sourceDocumentTypeId: record.format?.documentTypeId ?? '',
        targetDocumentTypeId: input.targetDocumentTypeId ?? '',
        // Beyond the spec's fields (receivers ignore unknown ones): which step produced the event, and why.
        stage: input.stage,
        ...(input.reasonCode !== undefined ? { reasonCode: input.reasonCode } : {}),
      },
      createdBy: record.createdBy,
    });
    return { eventId: event.id, label: event.label };
  }

  return {
    async detectDocumentFormat(input: SendInvoiceInput): Promise<DetectionOutcome> {
      const record = await deps.documents.findStored(input.tenantId, input.documentId);
      if (!record) throw new GatewayError('DOCUMENT_NOT_FOUND', `document ${input.documentId} not found`);
      // heartbeat() is throttled by the SDK, so calling it per chunk costs nothing.
      const bytes = await deps.blobs.read(record.blobId, deps.maxDocumentBytes, () => heartbeat());
      const outcome = detectionOutcome(bytes);
      if (outcome.ok) {
        await deps.documents.appendHistory(
          input.tenantId,
          input.documentId,
          { state: DocumentState.Detected, detail: outcome.format.id, key: HistoryStep.detect.key },
          { format: outcome.format },
        );
      } else {
        await deps.documents.appendHistory(input.tenantId, input.documentId, {
          state: DocumentState.Rejected,
          detail: `${outcome.code}: ${outcome.message}`,
          key: HistoryStep.detect.key,
        });
      }
      return outcome;
    },

    /**
     * The final error state of a sales invoice (spec 3): the state and its cause go on the record, then the
     * InvoiceSentError event through publishEvent. The event id comes from the workflow, so a retried activity
     * publishes once; the history entry is keyed, so it is written once. Kept for the detection and validation steps
     * (recorded histories schedule it by name); it is publishSendEvent with the error topic.
     */
    async failSend(input: FailSendInput): Promise<PublishedDocumentEvent> {
      return publishSendEvent({ ...input, topic: 'InvoiceSentError' });
    },

    /** InvoiceSent, InvoiceSentRetry or InvoiceSentError: the record's state and history entry, then the event. */
    publishSendEvent,
  };
}
