/**
 * The receive-document use case: a stored Peppol AS4 message's business document (or a document injected through the
 * API as if it had arrived) is detected, validated with the official rules of its format, made the party's purchase
 * document and announced (InvoiceReceived / InvoiceReceivedError). Activities only adapt these.
 */
import { Readable } from 'node:stream';
import { DocumentState, Transition } from '../core/document-states';
import { GatewayError } from '../core/gateway-error';
import { detectionOutcome } from '../documents/detection';
import { invoiceReceivedEvent } from '../documents/events';
import { inspectUpload } from '../documents/detection';
import { findDocument, readBytes, type DocumentStore } from '../documents/loader';
import { nameBasedUuid } from '../ids/name-uuid';
import { DOCTYPE_SCHEME_BUSDOX, formatId } from '../peppol/identifiers';
import { businessDocumentOf } from '../peppol/sbdh';
import type { As4InboundRepository } from '../storage/as4/as4-inbound.repository';
import type { SentInstanceRepository } from '../storage/peppol/sent-instance.repository';
import type { SentReferenceRepository } from '../storage/peppol/sent-reference.repository';
import type { DirectoryRepository } from '../storage/directory.repository';
import type { StoredDocument } from '../storage/document.repository';
import type { DocumentValidator, EventSink } from '../sending/ports';
import type { DetectionOutcome } from '../../workflows/contracts/send-invoice';
import type {
  INJECTED_CREATED_BY as InjectedCreatedBy,
  ReceiveDocumentInput,
  ReceivedDocumentInput,
  ReceivedDocumentOutcome,
  ReceivedValidation,
  ReceivedValidationInput,
} from '../../workflows/contracts/receive-document';
import { validateReceived, validationDetails } from './validation';
import {
  isReceivedMls,
  matchMls,
  mlsFindings,
  mlsHistoryDetail,
  mlsReceivedEvent,
  readReceivedMls,
  refusalDetail,
} from './mls';
import { readReceivedKind, receivedKindOf, registerKind } from './responses';

export { verdictOf, validationDetails } from './validation';

/** The contract's createdBy of an injected document (a type-only import: src/ takes no values from workflows/). */
const INJECTED_CREATED_BY: typeof InjectedCreatedBy = 'manualUpload';

/** Everything the receive-document use case needs, all required. */
export interface ReceiveDocumentDeps extends DocumentStore {
  as4Inbound: As4InboundRepository;
  directory: Pick<DirectoryRepository, 'findParty'>;
  events: EventSink;
  /** The official-rule validator of the send path (the document pool's threads in the worker). */
  validator: DocumentValidator;
  /** Which sales invoice an SBDH InstanceIdentifier we sent carries (a received MLS names it). */
  sentInstances: Pick<SentInstanceRepository, 'find'>;
  /** Which sales invoice (or order) a number we sent names (a received Invoice / Order Response names it so). */
  sentReferences: Pick<SentReferenceRepository, 'find'>;
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
  return businessDocumentOf(sbd);
}

async function findMessage(deps: ReceiveDocumentDeps, input: ReceiveDocumentInput) {
  const record = await deps.as4Inbound.findByMessageId(input.messageId);
  if (!record || record.tenantId !== input.tenantId)
    throw new GatewayError('DOCUMENT_NOT_FOUND', `received message ${input.messageId} not found`);
  return record;
}

/** The record of a document injected through the API (written at intake, before its run started). */
async function findInjected(deps: ReceiveDocumentDeps, tenantId: string, documentId: string): Promise<StoredDocument> {
  const stored = await findDocument(deps, tenantId, documentId);
  if (stored.direction !== 'inbound')
    throw new GatewayError('DOCUMENT_NOT_FOUND', `received document ${documentId} not found`);
  return stored;
}

/** The id of the party's document a run makes: name-based on the message, or the injected document's own. */
function documentIdOf(input: ReceiveDocumentInput): string {
  return input.injected ? input.injected.documentId : receivedDocumentId(input.tenantId, input.messageId);
}

/** The business document a run works on: the one inside the message's SBD, or the injected bytes as uploaded. */
async function businessBytes(deps: ReceiveDocumentDeps, input: ReceiveDocumentInput): Promise<Buffer> {
  if (input.injected) {
    const stored = await findInjected(deps, input.tenantId, input.injected.documentId);
    return readBytes(deps, stored.blobId);
  }
  const record = await findMessage(deps, input);
  return businessDocument(await readBytes(deps, record.blobId));
}

/**
 * Detects the format of a received document and records it on the message (idempotent: same input, same write). An
 * injected document has no message: its detection is recorded on its own record by the register step.
 */
export async function detectReceivedFormat(
  deps: ReceiveDocumentDeps,
  input: ReceiveDocumentInput,
): Promise<DetectionOutcome> {
  if (input.injected) return detectionOutcome(await businessBytes(deps, input));
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
 * Validates the received business document with the official rules of its detected format and records the verdict
 * on the party's document (its validation entry, keyed under the document's id, which the register step's record
 * then carries). Never refuses the document: the verdict travels with it.
 */
export async function validateReceivedDocument(
  deps: ReceiveDocumentDeps,
  input: ReceivedValidationInput,
): Promise<ReceivedValidation> {
  const bytes = await businessBytes(deps, input);
  return validateReceived(
    deps,
    { tenantId: input.tenantId, documentId: documentIdOf(input), formatId: input.formatId },
    bytes,
  );
}

/** What an injected document's event says of its origin: its seller's endpoint, its Peppol document type. */
function injectedFacts(bytes: Buffer, detection: DetectionOutcome): { sender: string; documentTypeId: string } {
  const { routing } = inspectUpload(bytes);
  const sender = routing?.ok ? formatId(routing.sender) : 'unknown';
  const typeValue = detection.ok ? detection.format.documentTypeId : undefined;
  return { sender, documentTypeId: typeValue ? formatId({ scheme: DOCTYPE_SCHEME_BUSDOX, value: typeValue }) : '' };
}

/** An injected document's record, its party and what its event names (its detection goes on its own history). */
async function registerInjected(deps: ReceiveDocumentDeps, input: ReceivedDocumentInput, documentId: string) {
  const stored = await findInjected(deps, input.tenantId, documentId);
  const facts = injectedFacts(await readBytes(deps, stored.blobId), input.detection);
  return { partyId: stored.partyId, ...facts };
}

/**
 * Makes a received message's business document the party's purchase document (record + bytes, downloadable by
 * documentId) and tells the party: InvoiceReceived for an invoice or credit note, InvoiceReceivedError when the
 * gateway could not read it; the event carries the validation verdict. Idempotent: the documentId and the event id
 * are fixed by the message and the workflow. An injected document's record exists already (written at intake).
 */
export async function registerReceivedDocument(
  deps: ReceiveDocumentDeps,
  input: ReceivedDocumentInput,
): Promise<ReceivedDocumentOutcome> {
  if (input.injected) {
    const documentId = input.injected.documentId;
    if (isReceivedMls(undefined, input.detection)) {
      const stored = await findInjected(deps, input.tenantId, documentId);
      const bytes = await readBytes(deps, stored.blobId);
      return registerMls(deps, input, { documentId, partyId: stored.partyId, bytes, documentTypeId: '' });
    }
    const injectedKind = receivedKindOf(undefined, input.detection);
    if (injectedKind) {
      const stored = await findInjected(deps, input.tenantId, documentId);
      const bytes = await readBytes(deps, stored.blobId);
      const facts = injectedFacts(bytes, input.detection);
      const origin = { documentId, partyId: stored.partyId, bytes, ...facts, createdBy: INJECTED_CREATED_BY };
      const read = await readReceivedKind(deps, input.tenantId, injectedKind, origin, input.detection);
      return registerKind(deps, input, injectedKind, origin, read);
    }
    return announce(deps, input, documentId, await registerInjected(deps, input, documentId), INJECTED_CREATED_BY);
  }
  const record = await findMessage(deps, input);
  const documentId = receivedDocumentId(input.tenantId, input.messageId);
  if (isReceivedMls(record.documentType, input.detection)) {
    const bytes = businessDocument(await readBytes(deps, record.blobId));
    const read = readReceivedMls(bytes);
    // The MLS is the document of the party whose invoice it answers (the party it was addressed to otherwise).
    const match = read.ok ? await matchMls(deps.sentInstances, read.mls, input.tenantId) : null;
    const partyId = match?.partyId ?? record.partyId;
    await storeReceived(deps, input, documentId, partyId, bytes);
    return registerMls(deps, input, { documentId, partyId, bytes, documentTypeId: record.documentType, read, match });
  }
  const kind = receivedKindOf(record.documentType, input.detection);
  if (kind) {
    const bytes = businessDocument(await readBytes(deps, record.blobId));
    const origin = {
      documentId,
      partyId: record.partyId,
      bytes,
      sender: record.sender,
      documentTypeId: record.documentType,
      createdBy: 'peppol',
      messageId: input.messageId,
    };
    const read = await readReceivedKind(deps, input.tenantId, kind, origin, input.detection);
    // A response is the document of the party whose document it answers (the party it was addressed to otherwise).
    const partyId = typeof read !== 'string' && read.matchedPartyId ? read.matchedPartyId : record.partyId;
    await storeReceived(deps, input, documentId, partyId, bytes);
    return registerKind(deps, input, kind, { ...origin, partyId }, read);
  }
  if (!(await deps.documents.findStored(input.tenantId, documentId))) {
    const bytes = businessDocument(await readBytes(deps, record.blobId));
    await storeReceived(deps, input, documentId, record.partyId, bytes);
  }
  return announce(deps, input, documentId, record, 'peppol');
}

/** Stores a received message's business document as the party's document, once (a retried step finds it). */
async function storeReceived(
  deps: ReceiveDocumentDeps,
  input: ReceiveDocumentInput,
  documentId: string,
  partyId: string,
  bytes: Buffer,
): Promise<StoredDocument> {
  let doc = await deps.documents.findStored(input.tenantId, documentId);
  if (doc) return doc;
  const blob = await deps.blobs.put(Readable.from([bytes]), {
    limit: bytes.length,
    filename: `${documentId}.xml`,
    contentType: 'application/xml',
    metadata: { tenantId: input.tenantId, as4MessageId: input.messageId },
  });
  doc = await deps.documents.insertInbound({
    tenantId: input.tenantId,
    documentId,
    partyId,
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
  return doc;
}

/**
 * A received MLS, stored as the party's document: refused with the first MLS rule it breaks (recorded, announced to
 * nobody), or matched to the sales invoice it answers, recorded on that invoice's history (an entry that never hides
 * its final state) and announced as MessageLevelStatusReceived; one that answers none of ours is announced with an
 * empty refToDocumentId, never dropped.
 */
async function registerMls(
  deps: ReceiveDocumentDeps,
  input: ReceivedDocumentInput,
  m: {
    documentId: string;
    partyId: string;
    bytes: Buffer;
    documentTypeId: string;
    read?: ReturnType<typeof readReceivedMls>;
    match?: Awaited<ReturnType<typeof matchMls>>;
  },
): Promise<ReceivedDocumentOutcome> {
  const { documentId } = m;
  const read = m.read ?? readReceivedMls(m.bytes);
  if (!read.ok) {
    const detail = refusalDetail(read.problems);
    await deps.documents.recordTransition(input.tenantId, documentId, Transition.receivedMlsRefused, { detail });
    return { documentId, state: DocumentState.Rejected, mls: { refused: detail } };
  }
  const { mls } = read;
  const match = m.match !== undefined ? m.match : await matchMls(deps.sentInstances, mls, input.tenantId);
  const { detection } = input;
  await deps.documents.recordTransition(
    input.tenantId,
    documentId,
    Transition.receivedOther,
    { detail: detection.ok ? detection.format.id : 'peppol-mls' },
    detection.ok ? { format: { ...detection.format } } : {},
  );
  if (match) {
    await deps.documents.recordTransition(match.tenantId, match.documentId, Transition.mlsReceived, {
      ...(match.generation ? { generation: match.generation } : {}),
      detail: mlsHistoryDetail(mls, documentId),
    });
  }
  const party = await deps.directory.findParty(match?.partyId ?? m.partyId);
  const event = mlsReceivedEvent({
    tenantId: input.tenantId,
    eventId: input.eventId,
    party:
      party && party.tenantId === input.tenantId
        ? { partyId: party.partyId, legalEntityId: party.legalEntityId }
        : null,
    mlsDocumentId: documentId,
    invoiceDocumentId: match?.documentId ?? null,
    documentTypeId: m.documentTypeId,
    ...(input.injected ? {} : { messageId: input.messageId }),
    mls,
  });
  const published = await deps.events.publishEvent(
    input.injected ? { ...event, createdBy: INJECTED_CREATED_BY } : event,
  );
  return {
    documentId,
    state: DocumentState.Detected,
    eventId: published.event.id,
    topic: 'MessageLevelStatusReceived',
    mls: {
      statusCode: mls.responseCode,
      refToDocumentId: match?.documentId ?? null,
      ...(match?.reportOf
        ? {
            reportOf: match.reportOf,
            ...(match.reportSequence ? { reportSequence: match.reportSequence } : {}),
            sender: formatId(mls.sender),
            reason: mlsFindings(mls),
          }
        : {}),
    },
  };
}

/** The detection entry of the party's document, then its event (none for kinds whose topics are not built yet). */
async function announce(
  deps: ReceiveDocumentDeps,
  input: ReceivedDocumentInput,
  documentId: string,
  origin: { partyId: string; sender: string; documentTypeId?: string; documentType?: string },
  createdBy: string,
): Promise<ReceivedDocumentOutcome> {
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
  if (transition.to === DocumentState.Detected && input.validation?.kind === 'not-validated') {
    // The validation step records its own verdict; a run whose validation could not run at all records it here (a
    // keyed insert: when the step wrote it, this one writes nothing).
    const detail = input.validation.reason;
    await deps.documents.recordTransition(input.tenantId, documentId, Transition.notValidated, { detail });
  }
  const state = stateAfter(transition.to, input.validation);
  if (!('topic' in transition)) return { documentId, state };
  const party = await deps.directory.findParty(origin.partyId);
  const built = invoiceReceivedEvent(transition.topic, {
    tenantId: input.tenantId,
    eventId: input.eventId,
    documentId,
    messageId: input.messageId,
    party:
      party && party.tenantId === input.tenantId
        ? { partyId: party.partyId, legalEntityId: party.legalEntityId }
        : null,
    sender: origin.sender,
    documentTypeId: origin.documentTypeId ?? origin.documentType ?? '',
    detection,
  });
  const details: Record<string, string> = { ...built.details, ...validationDetails(input.validation) };
  let message = built.message;
  if (createdBy !== 'peppol') {
    // Injected through the API: no AS4 message, and the event says where it came from.
    delete details['messageId'];
    details['createdBy'] = createdBy;
    message = message.replace(' received over Peppol ', ' injected through the API ');
  }
  const { event } = await deps.events.publishEvent({ ...built, message, details, createdBy });
  return { documentId, state, eventId: event.id, topic: transition.topic };
}

/** The document's state once its validation entry (written before its detection entry) is counted. */
function stateAfter(detected: string, validation: ReceivedValidation | undefined): string {
  if (!validation || detected !== DocumentState.Detected) return detected;
  return validation.kind === 'valid'
    ? DocumentState.Validated
    : validation.kind === 'invalid'
      ? DocumentState.Invalid
      : DocumentState.NotValidated;
}

export interface ReceiveDocumentSteps {
  detectReceivedFormat: (input: ReceiveDocumentInput) => Promise<DetectionOutcome>;
  validateReceivedDocument: (input: ReceivedValidationInput) => Promise<ReceivedValidation>;
  registerReceivedDocument: (input: ReceivedDocumentInput) => Promise<ReceivedDocumentOutcome>;
}

export function createReceiveDocument(deps: ReceiveDocumentDeps): ReceiveDocumentSteps {
  return {
    detectReceivedFormat: (input) => detectReceivedFormat(deps, input),
    validateReceivedDocument: (input) => validateReceivedDocument(deps, input),
    registerReceivedDocument: (input) => registerReceivedDocument(deps, input),
  };
}
