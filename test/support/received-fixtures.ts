/**
 * Fixtures of the received-document, response and order tests on a real database (a TestContext): documents stored as
 * the upload, the send path or the receive run leave them, AS4 messages stored as the receiver stores them, the receive
 * run's steps wired and run in the workflow's order, a recording event sink, a stand-in Peppol sender and the status
 * read of a document over HTTP.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import request from 'supertest';
import type { Application } from 'express';
import { Transition } from '../../src/core/document-states';
import type { As4SendOutcome } from '../../src/peppol/as4/sender';
import { formatId, type DocumentTypeId, type ParticipantId, type ProcessId } from '../../src/peppol/identifiers';
import { ApKeyRing } from '../../src/peppol/pki/key-ring';
import type { RecipientEndpoint } from '../../src/peppol/recipient-lookup';
import { buildSbd, type BuiltSbd, type SbdBuildInput } from '../../src/peppol/sbdh';
import { validatorOptions } from '../../src/main/compose';
import { createReceiveDocument, type ReceiveDocumentDeps, type ReceiveDocumentSteps } from '../../src/receiving';
import { As4InboundRepository } from '../../src/storage/as4/as4-inbound.repository';
import type { StoredBlob } from '../../src/storage/blob-store';
import { SentInstanceRepository } from '../../src/storage/peppol/sent-instance.repository';
import { SentReferenceRepository } from '../../src/storage/peppol/sent-reference.repository';
import type { PeppolSender } from '../../src/sending/ports';
import { createValidator } from '../../src/validation';
import type { PublishEventInput, PublishResult } from '../../src/webhooks/publish';
import type { ReceiveDocumentInput } from '../../workflows/contracts/receive-document';
import { corpusFile, SAMPLE_UBL_INVOICE } from './corpus';
import type { TestPki } from './peppol/test-pki';
import type { TestContext } from './test-app';

/** The sample invoice with a business-rule error (an unknown invoice type code: BR-CL-01, fatal). */
export function invalidInvoice(): Buffer {
  const xml = corpusFile(SAMPLE_UBL_INVOICE).toString('utf8');
  const broken = xml.replace(
    '<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>',
    '<cbc:InvoiceTypeCode>999</cbc:InvoiceTypeCode>',
  );
  expect(broken).not.toBe(xml);
  return Buffer.from(broken, 'utf8');
}

/** An event sink that records every event it is given in `published` and answers it as routed. */
export function recordingEvents(published: PublishEventInput[] = []): {
  published: PublishEventInput[];
  publishEvent(input: PublishEventInput): Promise<PublishResult>;
} {
  return {
    published,
    publishEvent(input: PublishEventInput): Promise<PublishResult> {
      published.push(input);
      return Promise.resolve({ event: { id: input.id, label: 'routed' } as PublishResult['event'], deliveries: [] });
    },
  };
}

/** `bytes` as an XML blob of `tenantId` (with more metadata when given). */
export function putXml(
  ctx: TestContext,
  tenantId: string,
  bytes: Buffer,
  filename = 'i.xml',
  metadata: Record<string, unknown> = {},
): Promise<StoredBlob> {
  return ctx.core.db.blobs.put(Readable.from([bytes]), {
    limit: bytes.length,
    filename,
    contentType: 'application/xml',
    metadata: { tenantId, ...metadata },
  });
}

export interface StoredDocumentSpec {
  tenantId: string;
  partyId: string;
  bytes: Buffer;
  direction: 'inbound' | 'outbound';
  createdBy: string;
  /** The blob's file name (default i.xml). */
  filename?: string;
  channel?: string;
  /** More blob metadata than the tenant. */
  metadata?: Record<string, unknown>;
}

/** A document record over its blob, nothing more: its id. */
export async function storeDocument(ctx: TestContext, spec: StoredDocumentSpec): Promise<string> {
  const documentId = randomUUID();
  const blob = await putXml(ctx, spec.tenantId, spec.bytes, spec.filename, spec.metadata);
  const doc = {
    tenantId: spec.tenantId,
    documentId,
    partyId: spec.partyId,
    ...(spec.channel !== undefined ? { channel: spec.channel } : {}),
    createdBy: spec.createdBy,
    contentType: 'application/xml',
    size: blob.size,
    sha256: blob.sha256,
    blobId: blob.blobId,
  };
  if (spec.direction === 'inbound') await ctx.core.documents.insertInbound(doc);
  else await ctx.core.documents.insertOutbound(doc);
  return documentId;
}

/** A sales document of `partyId` as an answered upload leaves it (stored over the API, accepted): its id. */
export async function storeAcceptedOutbound(
  ctx: TestContext,
  tenantId: string,
  partyId: string,
  bytes: Buffer,
  filename = 'i.xml',
): Promise<string> {
  const documentId = await storeDocument(ctx, {
    tenantId,
    partyId,
    bytes,
    direction: 'outbound',
    createdBy: 'api',
    filename,
  });
  await ctx.core.documents.accept(tenantId, documentId);
  return documentId;
}

/** The accepted sales document's attempt over Peppol, delivered or not yet. */
export async function recordSent(ctx: TestContext, tenantId: string, documentId: string, delivered = true) {
  await ctx.core.documents.recordTransition(tenantId, documentId, Transition.sendAttempt, { attempt: 1 });
  if (delivered) await ctx.core.documents.recordTransition(tenantId, documentId, Transition.delivered);
}

/** The format a receive run's detection entry names. */
export interface DetectedFormat {
  id: string;
  name: string;
  documentType: string;
}

/** A received document of `partyId` as the receive run leaves it (record, detection entry with its format): its id. */
export async function storeDetectedDocument(
  ctx: TestContext,
  spec: Omit<StoredDocumentSpec, 'createdBy'> & { format: DetectedFormat },
): Promise<string> {
  const documentId = await storeDocument(ctx, { ...spec, createdBy: 'peppol' });
  await ctx.core.documents.recordTransition(
    spec.tenantId,
    documentId,
    Transition.receivedOther,
    { detail: spec.format.id },
    { format: { ...spec.format, syntax: 'UBL', customizationId: 'x', profileId: 'y', documentTypeId: 'z' } },
  );
  return documentId;
}

/** A message that arrived over AS4 for `partyId` of `tenantId`, as the receiver stores it. */
export interface As4Arrival {
  tenantId: string;
  partyId: string;
  sender: ParticipantId;
  receiver: ParticipantId;
  documentType: DocumentTypeId;
  process: ProcessId;
  countryC1: string;
  payload: SbdBuildInput['payload'];
  /** Default: a random `…@peer`. */
  messageId?: string;
  /**
   * The SBDH InstanceIdentifier, also the stored message's instance. Default: the SBDH gets its own and the stored
   * message a random one (a receiver that does not read it).
   */
  instanceId?: string;
  mlsTo?: ParticipantId;
  mlsType?: SbdBuildInput['mlsType'];
  /** The Seat IDs of the sending and the receiving access point (default POP000111, POP000222). */
  seats?: { from: string; to: string };
}

/** Builds the SBD of `arrival` and stores it with its message record: the message id and the SBD. */
export async function storeAs4Arrival(
  as4: As4InboundRepository,
  arrival: As4Arrival,
): Promise<{ messageId: string; sbd: BuiltSbd }> {
  const messageId = arrival.messageId ?? `${randomUUID()}@peer`;
  const sbd = buildSbd({
    sender: arrival.sender,
    receiver: arrival.receiver,
    documentType: arrival.documentType,
    process: arrival.process,
    countryC1: arrival.countryC1,
    ...(arrival.instanceId !== undefined ? { instanceIdentifier: arrival.instanceId } : {}),
    ...(arrival.mlsTo ? { mlsTo: arrival.mlsTo } : {}),
    ...(arrival.mlsType ? { mlsType: arrival.mlsType } : {}),
    payload: arrival.payload,
  });
  await as4.store(
    {
      messageId,
      instanceKey: `${formatId(arrival.sender)}|${arrival.instanceId ?? randomUUID()}`,
      instanceId: arrival.instanceId ?? randomUUID(),
      tenantId: arrival.tenantId,
      partyId: arrival.partyId,
      sender: formatId(arrival.sender),
      receiver: formatId(arrival.receiver),
      documentType: formatId(arrival.documentType),
      process: formatId(arrival.process),
      countryC1: arrival.countryC1,
      fromSeatId: arrival.seats?.from ?? 'POP000111',
      toSeatId: arrival.seats?.to ?? 'POP000222',
      signerSha256: 'x',
      size: sbd.xml.length,
      sha256: 'x',
      referencesSha256: 'x',
      receiptXml: '<r/>',
      receivedAt: new Date(),
    },
    sbd.xml,
  );
  return { messageId, sbd };
}

/** The receive run's steps on the context's database; what is not given is the real thing (events: recorded). */
export function receiveDocumentSteps(ctx: TestContext, given: Partial<ReceiveDocumentDeps> = {}): ReceiveDocumentSteps {
  return createReceiveDocument({
    documents: ctx.core.documents,
    blobs: ctx.core.db.blobs,
    maxDocumentBytes: given.maxDocumentBytes ?? ctx.config.http.maxUploadBytes,
    heartbeat: () => undefined,
    as4Inbound: given.as4Inbound ?? new As4InboundRepository(ctx.core.db.models, ctx.core.db.blobs),
    sentInstances: given.sentInstances ?? new SentInstanceRepository(ctx.core.db.models),
    sentReferences: given.sentReferences ?? new SentReferenceRepository(ctx.core.db.models),
    directory: ctx.core.directory,
    validator: given.validator ?? createValidator(validatorOptions(ctx.config)),
    events: given.events ?? recordingEvents(),
  });
}

/**
 * The receive run's steps on a message, in the workflow's order: detection, validation (`validate`: never, when the
 * format was detected, or required: an undetected message then throws), registration with a fresh event id.
 */
export async function runReceiveSteps(
  steps: ReceiveDocumentSteps,
  input: ReceiveDocumentInput,
  validate: 'never' | 'if-detected' | 'required' = 'never',
) {
  const detection = await steps.detectReceivedFormat(input);
  if (validate === 'required' && !detection.ok) throw new Error(`not detected: ${detection.message}`);
  const validation =
    validate !== 'never' && detection.ok
      ? await steps.validateReceivedDocument({ ...input, formatId: detection.format.id })
      : undefined;
  const eventId = randomUUID();
  const received = await steps.registerReceivedDocument({
    ...input,
    detection,
    ...(validation ? { validation } : {}),
    eventId,
  });
  return { detection, validation, received, eventId };
}

/** `GET /api/v1/{partyId}/{kind}/{documentId}/status`, which must answer 200: its body. */
export async function readStatus<T>(
  app: Application,
  token: string,
  partyId: string,
  documentId: string,
  kind = 'salesInvoice',
): Promise<T> {
  const res = await request(app).get(`/api/v1/${partyId}/${kind}/${documentId}/status`).auth(token, { type: 'bearer' });
  expect(res.status).toBe(200);
  return res.body as T;
}

/**
 * A stand-in for the Peppol network of a sending step: every lookup finds the test receiver's endpoint (or, with
 * `lookupFails`, an unknown participant), every exchange answers the next of `outcomes` (then delivered).
 */
export function standInPeppolSender(
  pki: TestPki,
  outcomes: Array<As4SendOutcome['outcome']>,
  options: {
    lookupFails?: boolean;
    onLookup?: (participant: ParticipantId, types: readonly DocumentTypeId[], process: ProcessId | undefined) => void;
  } = {},
): { peppolSender: PeppolSender; exchanges: Array<{ messageId: string; url: string }> } {
  const exchanges: Array<{ messageId: string; url: string }> = [];
  const peppolSender: PeppolSender = {
    keys: new ApKeyRing([pki.apSender]),
    apCertificateAuthorities: [pki.apCa.certificate],
    lookup: {
      findEndpoint: async (participant, types, process) => {
        options.onLookup?.(participant as ParticipantId, types, process);
        if (options.lookupFails)
          return { ok: false, failure: 'participant-unknown', message: 'participant unknown in the SML' } as never;
        const endpoint = { url: 'https://c2.example.test/as4', certificate: pki.apReceiver.certificate };
        return {
          ok: true,
          participant: participant as ParticipantId,
          smpUrl: 'https://smp.example.test',
          documentType: types[0]!,
          process: process!,
          result: { endpoint } as never,
        } satisfies RecipientEndpoint;
      },
    },
    exchange: async (message, url) => {
      const outcome = outcomes[exchanges.length] ?? 'delivered';
      exchanges.push({ messageId: message.messageId, url });
      return outcome === 'delivered'
        ? {
            outcome,
            httpStatus: 200,
            receiptMessageId: 'receipt',
            references: [],
            receiverCertificate: pki.apReceiver.certificate,
            revocationChecked: false,
          }
        : ({ outcome, httpStatus: 503, reason: 'Service Unavailable' } as As4SendOutcome);
    },
  };
  return { peppolSender, exchanges };
}
