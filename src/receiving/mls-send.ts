/**
 * Sending a message-level status (MLS) for a document received over Peppol: we are C3 and answer C2, the access point
 * that sent it. The MLS is built once per received document (its id, issue time and AS4 ids derive from the document
 * and the first attempt, so every attempt is the same message), stored as a document of its own (an outbound record
 * of the receiving party, downloadable, one per received document: Peppol allows one MLS per business document), and
 * sent over AS4 to the address the MLS rules give (MLS_TO, else the sending access point's SPID), found with the send
 * path's SML/SMP lookup. Each attempt goes on the MLS document's history; what the peer answers is a result.
 */
import { GatewayError } from '../core/gateway-error';
import { readBytes, type DocumentStore } from '../documents/loader';
import { nameBasedUuid } from '../ids/name-uuid';
import { DOCTYPE_SCHEME_BUSDOX, formatId, spidOfSeatId } from '../peppol/identifiers';
import { MLS_PROFILE_ID, buildMls, mlsAddress, type MlsLineInput, type MlsResponseCode } from '../peppol/mls';
import { readSbdHeader } from '../peppol/sbdh';
import { MLS_DOCUMENT_TYPE, MLS_PROCESS } from '../peppol/smp-publisher';
import type { As4InboundRepository } from '../storage/as4/as4-inbound.repository';
import type { EventSink } from '../sending/ports';
import type { DirectoryRepository } from '../storage/directory.repository';
import type { MlsSentEventInput, SendMlsAttempt, SendMlsAttemptResult } from '../../workflows/contracts/send-mls';
import { MLS_STATUS_TEXT } from './mls';
import { peppolSenderOf, sendOverAs4, storeGeneratedDocument, type As4SendDeps } from '../sending/as4-send';

/** The MLS document type and process (Peppol code lists: MLS 1.0), as our SMP publishes them for our SPID. */
export { MLS_DOCUMENT_TYPE, MLS_PROCESS };

/** Namespace of the ids of the MLS documents we send (fixed once). */
export const SENT_MLS_NAMESPACE = '5d7e6c1a-2b8f-4c3e-9a1d-7f60e4b2c9a8';

/** The documentId of the MLS we send for a received document: one per received document. */
export function sentMlsDocumentId(tenantId: string, receivedDocumentId: string): string {
  return nameBasedUuid(SENT_MLS_NAMESPACE, [tenantId, receivedDocumentId]);
}

export interface MlsSendDeps extends As4SendDeps {
  as4Inbound: Pick<As4InboundRepository, 'findByMessageId'>;
}

/** What one attempt needs: the received document, the verdict to send, and the first attempt's time. */
export interface SendMlsAttemptInput {
  tenantId: string;
  /** The received document answered. */
  documentId: string;
  responseCode: MlsResponseCode;
  description?: string;
  lines?: readonly MlsLineInput[];
  attempt: number;
  /** ISO time of the first attempt: the MLS's issue time and the AS4 timestamp of every attempt. */
  firstAttemptAt: string;
}

export interface SendMlsAttemptOutcome {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  /** The stored MLS document (the event's documentId). */
  mlsDocumentId: string;
  /** Where it went: the MLS receiver and its AS4 endpoint (empty when the lookup failed). */
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
}

/** The AS4 message a received document came in, from its bytes' metadata (injected documents have none). */
export async function receivedMessageIdOf(
  store: Pick<DocumentStore, 'blobs'>,
  blobId: string,
): Promise<string | undefined> {
  const meta = await store.blobs.metadata(blobId);
  const id = meta?.['as4MessageId'];
  return typeof id === 'string' && id !== '' ? id : undefined;
}

const notFound = (documentId: string, why: string) =>
  new GatewayError('DOCUMENT_NOT_FOUND', `received document ${documentId} ${why}`);

/** One attempt to send a received document's MLS. Our own infrastructure failures throw; the peer's are results. */
export async function sendMlsAttempt(deps: MlsSendDeps, input: SendMlsAttemptInput): Promise<SendMlsAttemptOutcome> {
  const sender = peppolSenderOf(deps);
  const received = await deps.documents.findStored(input.tenantId, input.documentId);
  if (!received || received.direction !== 'inbound') throw notFound(input.documentId, 'not found');
  const messageId = await receivedMessageIdOf(deps, received.blobId);
  if (!messageId) throw notFound(input.documentId, 'did not arrive over Peppol AS4');
  const message = await deps.as4Inbound.findByMessageId(messageId);
  if (!message || message.tenantId !== input.tenantId) throw notFound(input.documentId, 'has no stored AS4 message');
  const { header } = readSbdHeader(await readBytes(deps, message.blobId));

  const mlsDocumentId = sentMlsDocumentId(input.tenantId, input.documentId);
  const firstAttemptAt = new Date(input.firstAttemptAt);
  const address = mlsAddress({
    ...(header.mlsTo ? { mlsTo: header.mlsTo } : {}),
    sendingApCommonName: message.fromSeatId,
  });
  const empty = { mlsDocumentId, endpoint: '', messageId: '' };
  if (!address.ok) return { ...empty, outcome: 'failed', to: '', reason: address.reason };
  const ourSpid = spidOfSeatId(sender.keys.seatId);
  const built = buildMls({
    responseCode: input.responseCode,
    referencedInstanceId: header.instanceIdentifier,
    sender: ourSpid,
    receiver: address.to,
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.lines ? { lines: input.lines } : {}),
    id: mlsDocumentId,
    issuedAt: firstAttemptAt,
  });
  const bytes = Buffer.from(built.xml, 'utf8');
  await storeSentMls(deps, input.tenantId, mlsDocumentId, received.partyId, bytes);

  const sent = await sendOverAs4(deps, {
    tenantId: input.tenantId,
    documentId: mlsDocumentId,
    partyId: received.partyId,
    bytes,
    sender: ourSpid,
    receiver: address.to,
    documentType: MLS_DOCUMENT_TYPE,
    process: MLS_PROCESS,
    // C1 of an MLS is its sender's country: the country of the message it answers is the nearest we know.
    countryC1: header.countryC1 ?? message.countryC1 ?? 'ZZ',
    idSeed: `${input.tenantId}:mls:${mlsDocumentId}`,
    attempt: input.attempt,
    firstAttemptAt,
    label: `MLS ${input.responseCode}`,
  });
  return { ...sent, mlsDocumentId };
}

/** The MLS as the receiving party's outbound document, written once (a retried attempt finds it). */
async function storeSentMls(
  deps: MlsSendDeps,
  tenantId: string,
  documentId: string,
  partyId: string,
  bytes: Buffer,
): Promise<void> {
  if (await deps.documents.findStored(tenantId, documentId)) return;
  await storeGeneratedDocument(deps, {
    tenantId,
    documentId,
    partyId,
    bytes,
    kind: 'mls',
    createdBy: 'peppol',
    format: {
      id: 'peppol-mls',
      name: 'Peppol MLS 1.0',
      syntax: 'UBL',
      documentType: 'ApplicationResponse',
      customizationId: 'urn:peppol:edec:mls:1.0',
      profileId: MLS_PROFILE_ID,
      documentTypeId: MLS_DOCUMENT_TYPE.value,
    },
  });
}

/** What publishing MessageLevelStatusSent needs besides the documents. */
export interface MlsSentDeps extends MlsSendDeps {
  directory: Pick<DirectoryRepository, 'findParty'>;
  events: EventSink;
}

/**
 * MessageLevelStatusSent for a delivered MLS (spec 6.3 details): `documentId` the MLS, `refToDocumentId` the received
 * document it answers. The event id comes from the workflow, so a retried step publishes once.
 */
export async function publishMlsSent(deps: MlsSentDeps, input: MlsSentEventInput): Promise<{ eventId: string }> {
  const received = await deps.documents.find(input.tenantId, input.documentId);
  if (!received) throw notFound(input.documentId, 'not found');
  const party = await deps.directory.findParty(received.partyId);
  const status = MLS_STATUS_TEXT[input.responseCode];
  const { event } = await deps.events.publishEvent({
    id: input.eventId,
    tenantId: input.tenantId,
    topic: 'MessageLevelStatusSent',
    party:
      party && party.tenantId === input.tenantId
        ? { partyId: party.partyId, legalEntityId: party.legalEntityId }
        : null,
    documentId: input.mlsDocumentId,
    refToDocumentId: input.documentId,
    message:
      `Message-level status ${input.responseCode} (${status}) sent to ${input.to} ` +
      `for document ${input.documentId}`,
    details: {
      statusCode: input.responseCode,
      status,
      description: input.description ?? '',
      profileId: MLS_PROFILE_ID,
      sourceDocumentTypeId: received.format?.documentTypeId
        ? formatId({ scheme: DOCTYPE_SCHEME_BUSDOX, value: received.format.documentTypeId })
        : '',
      attempt: String(input.attempt),
      protocol: 'peppol',
      // Beyond the spec's fields.
      to: input.to,
      messageId: input.messageId,
    },
    createdBy: 'peppol',
  });
  return { eventId: event.id };
}

export interface MlsSendingSteps {
  sendMlsAttempt: (input: SendMlsAttempt) => Promise<SendMlsAttemptResult>;
  publishMlsSent: (input: MlsSentEventInput) => Promise<{ eventId: string }>;
}

export function createMlsSending(deps: MlsSentDeps): MlsSendingSteps {
  return {
    sendMlsAttempt: (input) => sendMlsAttempt(deps, input),
    publishMlsSent: (input) => publishMlsSent(deps, input),
  };
}
