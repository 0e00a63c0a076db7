/**
 * The receive-document use case: a stored Peppol AS4 message's business document is detected, made the party's
 * purchase document and announced (InvoiceReceived / InvoiceReceivedError). Activities only adapt these.
 */
import { Readable } from 'node:stream';
import { XMLSerializer } from '@xmldom/xmldom';
import { DocumentState, Transition } from '../core/document-states';
import { GatewayError } from '../core/gateway-error';
import { detectionOutcome } from '../documents/detection';
import { invoiceReceivedEvent } from '../documents/events';
import { readBytes, type DocumentStore } from '../documents/loader';
import { nameBasedUuid } from '../ids/name-uuid';
import { parseSbd } from '../peppol/sbdh';
import type { As4InboundRepository } from '../storage/as4/as4-inbound.repository';
import type { DirectoryRepository } from '../storage/directory.repository';
import type { EventSink } from '../sending/ports';
import type { DetectionOutcome } from '../../workflows/contracts/send-invoice';
import type {
  ReceiveDocumentInput,
  ReceivedDocumentInput,
  ReceivedDocumentOutcome,
} from '../../workflows/contracts/receive-document';

/** Everything the receive-document use case needs, all required. */
export interface ReceiveDocumentDeps extends DocumentStore {
  as4Inbound: As4InboundRepository;
  directory: Pick<DirectoryRepository, 'findParty'>;
  events: EventSink;
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

async function findMessage(deps: ReceiveDocumentDeps, input: ReceiveDocumentInput) {
  const record = await deps.as4Inbound.findByMessageId(input.messageId);
  if (!record || record.tenantId !== input.tenantId)
    throw new GatewayError('DOCUMENT_NOT_FOUND', `received message ${input.messageId} not found`);
  return record;
}

/** Detects the format of a received document and records it on the message (idempotent: same input, same write). */
export async function detectReceivedFormat(
  deps: ReceiveDocumentDeps,
  input: ReceiveDocumentInput,
): Promise<DetectionOutcome> {
  const record = await findMessage(deps, input);
  const outcome = detectionOutcome(businessDocument(await readBytes(deps, record.blobId)));
  await deps.as4Inbound.recordState(
    input.messageId,
    outcome.ok
      ? { state: DocumentState.Detected, stateDetail: outcome.format.id, format: { ...outcome.format } }
      : { state: DocumentState.Rejected, stateDetail: `${outcome.code}: ${outcome.message}` },
  );
  return outcome;
}

/**
 * Makes a received message's business document the party's purchase document (record + bytes, downloadable by
 * documentId) and tells the party: InvoiceReceived for an invoice or credit note, InvoiceReceivedError when the
 * gateway could not read it. Idempotent: the documentId and the event id are fixed by the message and the workflow.
 */
export async function registerReceivedDocument(
  deps: ReceiveDocumentDeps,
  input: ReceivedDocumentInput,
): Promise<ReceivedDocumentOutcome> {
  const record = await findMessage(deps, input);
  const documentId = receivedDocumentId(input.tenantId, input.messageId);
  let doc = await deps.documents.findStored(input.tenantId, documentId);
  if (!doc) {
    const bytes = businessDocument(await readBytes(deps, record.blobId));
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
  const { detection } = input;
  const transition = !detection.ok
    ? Transition.receivedUnreadable
    : INVOICE_TYPES.has(detection.format.documentType)
      ? Transition.received
      : Transition.receivedOther;
  await deps.documents.recordTransition(
    input.tenantId,
    documentId,
    transition,
    { detail: detection.ok ? detection.format.id : `${detection.code}: ${detection.message}` },
    detection.ok ? { format: { ...detection.format } } : {},
  );
  const state = transition.to;
  if (!('topic' in transition)) return { documentId, state };
  const party = await deps.directory.findParty(record.partyId);
  const { event } = await deps.events.publishEvent(
    invoiceReceivedEvent(transition.topic, {
      tenantId: input.tenantId,
      eventId: input.eventId,
      documentId,
      messageId: input.messageId,
      party:
        party && party.tenantId === input.tenantId
          ? { partyId: party.partyId, legalEntityId: party.legalEntityId }
          : null,
      sender: record.sender,
      documentTypeId: record.documentType,
      detection,
    }),
  );
  return { documentId, state, eventId: event.id, topic: transition.topic };
}

export interface ReceiveDocumentSteps {
  detectReceivedFormat: (input: ReceiveDocumentInput) => Promise<DetectionOutcome>;
  registerReceivedDocument: (input: ReceivedDocumentInput) => Promise<ReceivedDocumentOutcome>;
}

export function createReceiveDocument(deps: ReceiveDocumentDeps): ReceiveDocumentSteps {
  return {
    detectReceivedFormat: (input) => detectReceivedFormat(deps, input),
    registerReceivedDocument: (input) => registerReceivedDocument(deps, input),
  };
}
