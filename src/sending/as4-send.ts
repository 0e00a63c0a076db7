/**
 * The one step every document the gateway sends outside the sendInvoice run shares (an MLS, an Invoice Response, an
 * Order Response, an uploaded order): find the receiver's AS4 endpoint through the send path's SML/SMP lookup, wrap the
 * stored bytes in an SBDH with ids fixed by the document (every attempt is the same message) and exchange it, putting
 * each attempt on the document's history. What the peer answers is a result; our own infrastructure failures throw.
 * Also the record of a document the gateway built itself (stored once, accepted, its kind as detection entry).
 */
import { Readable } from 'node:stream';
import { X509Certificate } from 'node:crypto';
import { DocumentState, Transition } from '../core/document-states';
import { GatewayError } from '../core/gateway-error';
import { readBytes, whileBeating, type DocumentStore } from '../documents/loader';
import { stableMessageIds } from '../peppol/as4/message-ids';
import { formatId, spidOfSeatId, type DocumentTypeId, type ParticipantId, type ProcessId } from '../peppol/identifiers';
import type { MlsType } from '../peppol/sbdh';
import { buildSbd } from '../peppol/sbdh';
import { forgetOnFailure, signAndExchange } from './delivery';
import { recordSentExchange, type ReportingItemSink } from '../reporting/peppol/items';
import { validatorFailure } from '../validation';
import { summarizeErrors } from './check-document';
import type { DocumentValidator, PeppolSender, PeppolUnavailable } from './ports';
import type { DetectedFormatSummary } from '../../workflows/contracts/send-invoice';
import type { StoredDocument } from '../storage/document.repository';
import type { SentInstanceRepository } from '../storage/peppol/sent-instance.repository';

export interface As4SendDeps extends DocumentStore {
  peppolSender: PeppolSender | PeppolUnavailable;
  /** Which document a message carried: an MLS answering it names only its SBDH instance identifier. */
  sentInstances?: Pick<SentInstanceRepository, 'record'>;
  /** Every settled AS4 exchange, for the Peppol network reports; absent in tests only. */
  reportingItems?: ReportingItemSink;
}

/** The configured sender, or the retryable failure of a worker that has none (another worker may send). */
export function peppolSenderOf(deps: As4SendDeps): PeppolSender {
  const sender = deps.peppolSender;
  if ('unavailable' in sender) {
    throw new GatewayError('DEPENDENCY_UNAVAILABLE', `Peppol sending is not configured: ${sender.unavailable}`, {
      retryable: true,
    });
  }
  return sender;
}

/** One attempt of a stored document: who, what, and the attempt's place in its run. */
export interface As4Attempt {
  tenantId: string;
  /** The stored document sent (its history gets the attempt). */
  documentId: string;
  /** The party the document is of (an MLS answering it becomes this party's document). */
  partyId: string;
  bytes: Buffer;
  sender: ParticipantId;
  receiver: ParticipantId;
  documentType: DocumentTypeId;
  process: ProcessId;
  countryC1: string;
  /** Seed of the stable AS4 / SBDH ids (one per message, fixed for all its attempts). */
  idSeed: string;
  attempt: number;
  /** The first attempt's time: the SBDH creation time and AS4 timestamp of every attempt. */
  firstAttemptAt: Date;
  /** How the history names the attempt, e.g. `Invoice response RE`; ` attempt <n> to <where>` follows. */
  label: string;
  /** Ask the receiver's access point for an MLS (SBDH MLS_TO / MLS_TYPE): to our service provider id. */
  mlsType?: MlsType;
  /** A tax report: the invoice it reports (kept with the SBDH instance, so its MLS finds the reportTax run). */
  reportOf?: string;
  /** Which report of that invoice, when not its first (its run's id names it). */
  reportSequence?: number;
}

export interface As4AttemptOutcome {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  /** The receiver (`iso6523-actorid-upis::…`). */
  to: string;
  /** Its AS4 endpoint and the message id ('' when the lookup failed). */
  endpoint: string;
  messageId: string;
  reason?: string;
}

/** Looks the receiver up, sends the document once over AS4 and records the attempt (and a delivery). */
export async function sendOverAs4(deps: As4SendDeps, input: As4Attempt): Promise<As4AttemptOutcome> {
  const sender = peppolSenderOf(deps);
  const to = formatId(input.receiver);
  const found = await whileBeating(deps.heartbeat, () =>
    sender.lookup.findEndpoint(input.receiver, [input.documentType], input.process),
  );
  if (!found.ok) {
    const outcome = found.failure === 'smp-unreachable' ? 'retryable' : 'failed';
    await recordAttempt(deps, input, `${to}: lookup ${found.failure}: ${found.message}`);
    return { outcome, to, endpoint: '', messageId: '', reason: found.message };
  }
  const endpoint = found.result.endpoint;
  const ids = stableMessageIds(input.idSeed);
  const header = {
    sender: input.sender,
    receiver: input.receiver,
    documentType: input.documentType,
    process: input.process,
  };
  const mlsTo = input.mlsType ? ourSpid(sender) : undefined;
  const sbd = buildSbd({
    ...header,
    countryC1: input.countryC1,
    ...(mlsTo && input.mlsType ? { mlsTo, mlsType: input.mlsType } : {}),
    instanceIdentifier: ids.conversationId,
    creationDateAndTime: input.firstAttemptAt,
    payload: { xml: input.bytes },
  });
  await deps.sentInstances?.record({
    instanceId: ids.conversationId,
    tenantId: input.tenantId,
    documentId: input.documentId,
    partyId: input.partyId,
    generation: 0,
    ...(input.reportOf ? { reportOf: input.reportOf } : {}),
    ...(input.reportSequence ? { reportSequence: input.reportSequence } : {}),
  });
  const receiverCertificate = new X509Certificate(endpoint.certificate.raw);
  const { message, out } = await signAndExchange(deps.heartbeat, sender, {
    sbd: sbd.xml,
    header,
    receiverCertificate,
    timestamp: input.firstAttemptAt,
    ids,
    url: endpoint.url,
  });
  await recordSentExchange(deps.reportingItems, out.outcome, {
    messageId: message.messageId,
    header: { ...header, countryC1: input.countryC1 },
    receiverCertificate,
  });
  forgetOnFailure(sender, out.outcome, input.receiver);
  const reason = 'reason' in out ? out.reason : undefined;
  const status = out.httpStatus !== undefined ? `HTTP ${out.httpStatus}` : 'no HTTP answer';
  await recordAttempt(
    deps,
    input,
    `${to} at ${endpoint.url} (AS4 MessageId ${message.messageId}): ${out.outcome}, ${status}` +
      (reason ? `: ${reason}` : ''),
  );
  if (out.outcome === 'delivered' || out.outcome === 'duplicate')
    await deps.documents.recordTransition(input.tenantId, input.documentId, Transition.delivered);
  return {
    outcome: out.outcome,
    to,
    endpoint: endpoint.url,
    messageId: message.messageId,
    ...(reason !== undefined ? { reason } : {}),
  };
}

/** Our service provider id (`0242:<SPID>`, from our AP certificate's seat id): where MLS answers go. */
export function ourSpid(sender: PeppolSender): ParticipantId {
  try {
    return spidOfSeatId(sender.keys.seatId);
  } catch (e) {
    throw new GatewayError(
      'DEPENDENCY_UNAVAILABLE',
      `our AP certificate's seat id ${sender.keys.seatId} gives no service provider id for MLS_TO: ${String(e)}`,
    );
  }
}

async function recordAttempt(deps: As4SendDeps, input: As4Attempt, what: string): Promise<void> {
  await deps.documents.recordTransition(input.tenantId, input.documentId, Transition.sendAttempt, {
    attempt: input.attempt,
    detail: `${input.label} attempt ${input.attempt} to ${what}`.slice(0, 1000),
  });
}

/** A document the gateway built, to be kept as an outbound document of the party. */
export interface GeneratedDocument {
  tenantId: string;
  documentId: string;
  partyId: string;
  bytes: Buffer;
  /** The blob's `kind` metadata (`mls`, `invoice-response`, `order-response`). */
  kind: string;
  createdBy: string;
  format: DetectedFormatSummary;
  /** The pinned rules' verdict ('not validated: …' when none are pinned); absent: no validation entry. */
  validation?: string;
}

/**
 * Writes a built document once, as its party's outbound document (a retried attempt finds it): the record is its own
 * acceptance; its kind and verdict are its detection and validation entries. Returns the stored record, or null
 * when an earlier try had stored it and it cannot be read back.
 */
export async function storeGeneratedDocument(
  deps: DocumentStore,
  input: GeneratedDocument,
): Promise<StoredDocument | null> {
  const { tenantId, documentId, bytes } = input;
  const blob = await deps.blobs.put(Readable.from([bytes]), {
    limit: bytes.length,
    filename: `${documentId}.xml`,
    contentType: 'application/xml',
    metadata: { tenantId, documentId, kind: input.kind },
  });
  const doc = await deps.documents.insertOutbound({
    tenantId,
    documentId,
    partyId: input.partyId,
    channel: 'peppol',
    createdBy: input.createdBy,
    contentType: 'application/xml',
    size: blob.size,
    sha256: blob.sha256,
    blobId: blob.blobId,
  });
  if (!doc) {
    // An earlier try of this step stored it: that one is the message.
    await deps.blobs.delete(blob.blobId).catch(() => undefined);
    return deps.documents.findStored(tenantId, documentId);
  }
  await deps.documents.accept(tenantId, documentId);
  await deps.documents.appendHistory(
    tenantId,
    documentId,
    { key: 'detect', state: DocumentState.Detected, detail: input.format.id },
    { format: input.format },
  );
  if (input.validation !== undefined) {
    await deps.documents.recordTransition(
      tenantId,
      documentId,
      input.validation.startsWith('not validated') ? Transition.notValidated : Transition.validated,
      { detail: input.validation || 'validated' },
    );
  }
  return doc;
}

/**
 * The pinned rules' verdict on a document we built: `refused` (why) when they refuse it; else a note for its history
 * (the rule sets, or `not validated: …` when no rules are pinned for the format).
 */
export async function officialVerdict(
  validator: DocumentValidator,
  xml: Buffer,
  formatId: string,
  what: string,
): Promise<{ refused?: string; note: string }> {
  try {
    const result = await validator.validate(xml, { sourceFormat: formatId });
    if (result.isValid) return { note: result.ruleSets.map((r) => `${r.id}@${r.version}`).join(', ') };
    return {
      refused: `the built ${what} breaks the official rules: ${summarizeErrors(result.assertions, 5)}`.slice(0, 1000),
      note: '',
    };
  } catch (e) {
    const failure = validatorFailure(e);
    if (failure.kind === 'no-rules') return { note: `not validated: ${failure.reason}` };
    return { refused: `the built ${what} cannot be read as its format: ${failure.summary}`.slice(0, 1000), note: '' };
  }
}

/**
 * A response the gateway built, checked against the official rules of `format` and stored once (a retried attempt
 * finds the stored one, whose bytes are the message): the stored record, or why the rules refuse the built document.
 */
export async function storeCheckedDocument(
  deps: DocumentStore & { validator: DocumentValidator },
  input: Omit<GeneratedDocument, 'validation'> & { what: string },
): Promise<{ stored: StoredDocument } | { refused: string }> {
  const { what, ...doc } = input;
  const check = await officialVerdict(deps.validator, doc.bytes, doc.format.id, what);
  if (check.refused) return { refused: check.refused };
  const stored = await storeGeneratedDocument(deps, { ...doc, validation: check.note });
  if (!stored)
    throw new GatewayError('STORAGE_FAILED', `${what} ${doc.documentId} could not be recorded`, { retryable: true });
  return { stored };
}

/** A business document built to answer a received one (an Invoice Response, an Order Response). */
export interface AnswerAttempt {
  tenantId: string;
  /** The received document answered (an inbound document of the party). */
  documentId: string;
  /** The answer's stored document id (one per received document and verdict). */
  answerDocumentId: string;
  attempt: number;
  /** ISO time of the first attempt: the answer's issue time and the AS4 timestamp of every attempt. */
  firstAttemptAt: string;
  /** Builds the answer from the received bytes, or says why it cannot be built. */
  build: (
    receivedBytes: Buffer,
    meta: { id: string; issuedAt: Date },
  ) => { xml: string; sender: ParticipantId; receiver: ParticipantId; country?: string } | string;
  /** How it is stored, checked and sent: its kind, format, noun (`invoice response`) and AS4 coordinates. */
  kind: string;
  format: DetectedFormatSummary;
  what: string;
  documentType: DocumentTypeId;
  process: ProcessId;
  /** The history's name of an attempt, e.g. `Order response AP`. */
  label: string;
}

/**
 * One attempt of an answer to a received document: the received one is read, the answer built from it (a verdict
 * that does not fit is a refusal), checked with the official rules and stored once at the first attempt (a retried
 * attempt sends the stored bytes), then sent through the shared AS4 step. Our own failures throw.
 */
export async function sendAnswerAttempt(
  deps: As4SendDeps & { validator: DocumentValidator },
  a: AnswerAttempt,
): Promise<As4AttemptOutcome & { answerDocumentId: string }> {
  peppolSenderOf(deps);
  const received = await deps.documents.findStored(a.tenantId, a.documentId);
  if (!received || received.direction !== 'inbound')
    throw new GatewayError('DOCUMENT_NOT_FOUND', `received document ${a.documentId} not found`);
  const empty = { answerDocumentId: a.answerDocumentId, to: '', endpoint: '', messageId: '' };
  const firstAttemptAt = new Date(a.firstAttemptAt);
  let stored = await deps.documents.findStored(a.tenantId, a.answerDocumentId);
  const route = a.build(await readBytes(deps, received.blobId), { id: a.answerDocumentId, issuedAt: firstAttemptAt });
  if (typeof route === 'string') return { ...empty, outcome: 'failed', reason: route };
  if (!stored) {
    const built = await storeCheckedDocument(deps, {
      tenantId: a.tenantId,
      documentId: a.answerDocumentId,
      partyId: received.partyId,
      bytes: Buffer.from(route.xml, 'utf8'),
      kind: a.kind,
      createdBy: 'api',
      format: a.format,
      what: a.what,
    });
    if ('refused' in built) return { ...empty, outcome: 'failed', reason: built.refused };
    stored = built.stored;
  }
  const sent = await sendOverAs4(deps, {
    tenantId: a.tenantId,
    documentId: a.answerDocumentId,
    partyId: received.partyId,
    bytes: await readBytes(deps, stored.blobId),
    sender: route.sender,
    receiver: route.receiver,
    documentType: a.documentType,
    process: a.process,
    countryC1: route.country ?? 'ZZ',
    idSeed: `${a.tenantId}:${a.kind}:${a.answerDocumentId}`,
    attempt: a.attempt,
    firstAttemptAt,
    label: a.label,
  });
  return { ...sent, answerDocumentId: a.answerDocumentId };
}
