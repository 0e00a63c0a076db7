import { Readable } from 'node:stream';
import { XMLSerializer } from '@xmldom/xmldom';
import { heartbeat } from '@temporalio/activity';
import { DocumentState, HistoryStep } from '../src/core/document-states';
import { GatewayError } from '../src/core/gateway-error';
import { parseSbd } from '../src/peppol/sbdh';
import { nameBasedUuid } from '../src/ids/name-uuid';
import type { BlobStore } from '../src/storage/blob-store';
import type { As4InboundRepository } from '../src/storage/as4/as4-inbound.repository';
import type { DirectoryRepository } from '../src/storage/directory.repository';
import type { DocumentRepository } from '../src/storage/document.repository';
import type { EventPublisher } from '../src/webhooks/publish';
import type {
  DetectionOutcome,
  ReceiveDocumentInput,
  ReceivedDocumentInput,
  ReceivedDocumentOutcome,
} from '../workflows/messages';
import { detectionOutcome } from './detection';

export interface As4ActivityDeps {
  as4Inbound: As4InboundRepository;
  blobs: BlobStore;
  maxDocumentBytes: number;
  documents: DocumentRepository;
  directory: DirectoryRepository;
  webhooks?: { publisher: EventPublisher };
}

/** Namespace of received documents' ids (fixed once; the id of a received message's document derives from it). */
export const RECEIVED_DOCUMENT_NAMESPACE = 'c0b3f2a4-6d1e-4f7a-9a52-3e8d1b7c4f60';

/** The documentId of the business document of a received message: the same on every retry of the step. */
export function receivedDocumentId(tenantId: string, messageId: string): string {
  return nameBasedUuid(RECEIVED_DOCUMENT_NAMESPACE, [tenantId, messageId]);
}

/** Received business documents that are purchase invoices (the other kinds get their topics with their features). */
const INVOICE_TYPES = new Set(['Invoice', 'CreditNote']);

/** The business document inside a stored SBD, as the bytes format detection reads. */
function businessDocument(sbd: Buffer): Buffer {
  const { payload } = parseSbd(sbd);
  if (payload.kind === 'xml') return Buffer.from(new XMLSerializer().serializeToString(payload.element), 'utf8');
  if (payload.kind === 'binary') return payload.data;
  return Buffer.from(payload.text, 'utf8');
}

export function createAs4Activities(deps: As4ActivityDeps) {
  return {
    /** Detects the format of a received document and records it on the message (idempotent: same input, same write). */
    async detectReceivedFormat(input: ReceiveDocumentInput): Promise<DetectionOutcome> {
      const record = await deps.as4Inbound.findByMessageId(input.messageId);
      if (!record || record.tenantId !== input.tenantId)
        throw new GatewayError('DOCUMENT_NOT_FOUND', `received message ${input.messageId} not found`);
      const sbd = await deps.blobs.read(record.blobId, deps.maxDocumentBytes, () => heartbeat());
      const outcome = detectionOutcome(businessDocument(sbd));
      await deps.as4Inbound.recordState(
        input.messageId,
        outcome.ok
          ? { state: DocumentState.Detected, stateDetail: outcome.format.id, format: { ...outcome.format } }
          : { state: DocumentState.Rejected, stateDetail: `${outcome.code}: ${outcome.message}` },
      );
      return outcome;
    },

    /**
     * Makes a received message's business document the party's purchase document (record + bytes, downloadable by
     * documentId) and tells the party: InvoiceReceived for an invoice or credit note, InvoiceReceivedError when the
     * gateway could not read it. Idempotent: the documentId and the event id are fixed by the message and the workflow.
     */
    async registerReceivedDocument(input: ReceivedDocumentInput): Promise<ReceivedDocumentOutcome> {
      const record = await deps.as4Inbound.findByMessageId(input.messageId);
      if (!record || record.tenantId !== input.tenantId)
        throw new GatewayError('DOCUMENT_NOT_FOUND', `received message ${input.messageId} not found`);
      const documentId = receivedDocumentId(input.tenantId, input.messageId);
      let doc = await deps.documents.findStored(input.tenantId, documentId);
      if (!doc) {
        const sbd = await deps.blobs.read(record.blobId, deps.maxDocumentBytes, () => heartbeat());
        const bytes = businessDocument(sbd);
        const blob = await deps.blobs.put(Readable.from([bytes]), {
          limit: bytes.length,
          filename: `${documentId}.xml`,
          contentType: 'application/xml',
          metadata: { tenantId: input.tenantId, as4MessageId: input.messageId },
        });
        doc = await deps.documents.insertInbound({
          tenantId: input.tenantId,
          documentId,
          partyId: record.partyId,
          channel: 'peppol',
          createdBy: 'peppol',
          contentType: 'application/xml',
          size: blob.size,
          sha256: blob.sha256,
          blobId: blob.blobId,
        });
        if (!doc) {
          // An earlier try of this step wrote it first.
          await deps.blobs.delete(blob.blobId).catch(() => undefined);
          doc = await deps.documents.findStored(input.tenantId, documentId);
        }
        if (!doc)
          throw new GatewayError('STORAGE_FAILED', `received document ${documentId} could not be recorded`, {
            retryable: true,
          });
      }
      const detection = input.detection;
      const state = detection.ok ? DocumentState.Detected : DocumentState.Rejected;
      await deps.documents.appendHistory(
        input.tenantId,
        documentId,
        {
          state,
          key: HistoryStep.detect.key,
          detail: detection.ok ? detection.format.id : `${detection.code}: ${detection.message}`,
        },
        detection.ok ? { format: { ...detection.format } } : {},
      );
      const topic = !detection.ok
        ? 'InvoiceReceivedError'
        : INVOICE_TYPES.has(detection.format.documentType)
          ? 'InvoiceReceived'
          : undefined;
      if (!topic) return { documentId, state };
      const publisher = deps.webhooks?.publisher;
      if (!publisher)
        throw new GatewayError(
          'NOT_IMPLEMENTED',
          'event publishing is not wired in this worker (ActivityDeps.webhooks missing)',
          { retryable: false },
        );
      const party = await deps.directory.findParty(record.partyId);
      const { event } = await publisher.publishEvent({
        id: input.eventId,
        tenantId: input.tenantId,
        topic,
        party:
          party && party.tenantId === input.tenantId
            ? { partyId: party.partyId, legalEntityId: party.legalEntityId }
            : null,
        documentId,
        message: detection.ok
          ? `${detection.format.documentType === 'CreditNote' ? 'Credit note' : 'Invoice'} received over Peppol from ${record.sender} (${detection.format.name})`
          : `A document received over Peppol from ${record.sender} could not be read: ${detection.message}`,
        details: {
          id: documentId,
          sender: record.sender,
          createdBy: 'peppol',
          documentTypeId: record.documentType,
          // Beyond the spec's fields: the AS4 message it came in, for support.
          messageId: input.messageId,
          ...(detection.ok ? { formatId: detection.format.id } : { reasonCode: detection.code }),
        },
        createdBy: 'peppol',
      });
      return { documentId, state, eventId: event.id, topic };
    },
  };
}
