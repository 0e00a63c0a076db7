import { X509Certificate } from 'node:crypto';
import { Transition } from '../core/document-states';
import { GatewayError, isGatewayError } from '../core/gateway-error';
import { readBytes, whileBeating } from '../documents/loader';
import { buildPeppolMessage } from '../peppol/as4/message';
import { stableMessageIds } from '../peppol/as4/message-ids';
import { sendAs4Message } from '../peppol/as4/sender';
import { formatId, peppolParticipant, type ParticipantId } from '../peppol/identifiers';
import { buildSbd } from '../peppol/sbdh';
import { readBusinessReference } from '../peppol/business-reference';
import { convertForRecipient } from '../transform/recipient';
import { recordSentExchange } from '../reporting/peppol/items';
import type { SendPeppolInput, SendPeppolOutcome } from '../../workflows/contracts/send-invoice';
import { conversionSource } from './conversion-source';
import type { PeppolSender, SendInvoiceDeps } from './ports';

/**
 * The bytes that go out: the upload, or the conversion the route was chosen with (stored once by resolveRecipient).
 * Converted bytes removed meanwhile (reconciliation keeps only bytes a record refers to) are converted again, the same
 * bytes: conversion is a pure function.
 */
async function payloadOf(deps: SendInvoiceDeps, input: SendPeppolInput): Promise<Buffer> {
  const transform = input.route.transform;
  if (!transform) return readBytes(deps, input.facts.blobId);
  try {
    return await readBytes(deps, transform.blobId);
  } catch (e) {
    if (!isGatewayError(e) || e.code !== 'STORAGE_FAILED' || e.details?.blobId !== transform.blobId) throw e;
  }
  const upload = await readBytes(deps, input.facts.blobId);
  // Converted from what the route was chosen with (the upload itself, unless it lacked the Peppol addresses).
  const source =
    input.facts.root || input.facts.pdf ? upload : await conversionSource(upload, input.route, deps.transform);
  const converted = await convertForRecipient(source, transform.targetFormat, deps.transform);
  return converted.xml;
}

/**
 * Signs and encrypts an SBD into an AS4 message with the given ids and time stamp, and exchanges it with the receiving
 * access point (the receipt checked against our AP CAs and, when on, revocation). Heartbeats while the exchange waits:
 * it can take up to the AS4 timeout, and a live attempt must not be taken for a dead worker's. Sales invoices and
 * message-level status documents go out through this one path.
 */
export async function signAndExchange(
  heartbeat: () => void,
  sender: PeppolSender,
  m: {
    sbd: Parameters<typeof buildPeppolMessage>[0]['sbd'];
    header: Parameters<typeof buildPeppolMessage>[0]['header'];
    receiverCertificate: X509Certificate;
    timestamp: Date;
    ids: ReturnType<typeof stableMessageIds>;
    url: string;
  },
) {
  const message = buildPeppolMessage({
    sbd: m.sbd,
    header: m.header,
    signer: sender.keys.signing(),
    receiverCertificate: m.receiverCertificate,
    timestamp: m.timestamp,
    ...m.ids,
  });
  const exchange = sender.exchange ?? sendAs4Message;
  const out = await whileBeating(heartbeat, () =>
    exchange(message, m.url, {
      apCertificateAuthorities: sender.apCertificateAuthorities,
      receiverCertificate: m.receiverCertificate,
      ...(sender.revocation ? { revocation: sender.revocation } : {}),
      ...(sender.sendTimeoutMs ? { timeoutMs: sender.sendTimeoutMs } : {}),
    }),
  );
  return { message, out };
}

/**
 * A delivery that did not go through (no answer, an error answer, a receipt that does not check out) may mean the
 * recipient's endpoint or certificate changed: the next lookup asks its SMP again instead of using a kept answer.
 */
export function forgetOnFailure(sender: PeppolSender, outcome: string, receiver: ParticipantId): void {
  if (outcome !== 'delivered' && outcome !== 'duplicate') sender.lookup.forget?.(receiver);
}

/**
 * One delivery attempt: SBDH + AS4 message with the document's stable ids and the first attempt's timestamp (so a
 * resend is the same message), POSTed and the answer classified. The attempt and its outcome go on the record under
 * the key `send-attempt-<n>`. What the peer does is a result; only our own infrastructure failures throw.
 */
export async function sendPeppol(deps: SendInvoiceDeps, input: SendPeppolInput): Promise<SendPeppolOutcome> {
  const sender = deps.peppolSender;
  if ('unavailable' in sender) {
    // Only reachable when workers differ in configuration (this one resolved nowhere): another worker may send it.
    throw new GatewayError(
      'DEPENDENCY_UNAVAILABLE',
      `Peppol sending is not configured on this worker: ${sender.unavailable}`,
      { retryable: true },
    );
  }
  const { route, facts } = input;
  const bytes = await payloadOf(deps, input);
  const firstAttemptAt = new Date(input.firstAttemptAt);
  // A resend is a new message (its own generation), not a duplicate of the one that failed.
  const seed = `${input.tenantId}:${input.documentId}`;
  const ids = stableMessageIds(input.generation ? `${seed}:g${input.generation}` : seed);
  const header = {
    sender: route.sender,
    receiver: route.receiver,
    documentType: route.documentType,
    process: route.process,
  };
  const sbd = buildSbd({
    ...header,
    countryC1: route.countryC1,
    // The same instance identifier and creation time on every attempt: a resend carries the same SBD.
    instanceIdentifier: ids.conversationId,
    creationDateAndTime: firstAttemptAt,
    // Where and when the receiving access point answers with an MLS (fixed with the route, like everything here).
    ...(route.mlsTo ? { mlsTo: peppolParticipant(route.mlsTo.value) } : {}),
    ...(route.mlsType ? { mlsType: route.mlsType } : {}),
    // The upload's root is known from detection: the payload is not parsed again.
    payload: { xml: bytes, ...(!route.transform && facts.root ? { root: facts.root } : {}) },
  });
  // The MLS that answers this message names it by its instance identifier only: keep which document it carries.
  await deps.sentInstances?.record({
    instanceId: ids.conversationId,
    tenantId: input.tenantId,
    documentId: input.documentId,
    partyId: facts.partyId,
    generation: input.generation ?? 0,
  });
  // A buyer's Invoice Response names the invoice by its number and issue date, addressed to our seller endpoint.
  if (deps.sentReferences && input.attempt === 1) {
    const ref = readBusinessReference(bytes);
    if (ref) {
      await deps.sentReferences.record({
        tenantId: input.tenantId,
        endpoint: route.sender.value,
        ...ref,
        documentId: input.documentId,
        partyId: facts.partyId,
        generation: input.generation ?? 0,
      });
    }
  }
  const receiverCertificate = new X509Certificate(Buffer.from(route.receiverCertificate, 'base64'));
  const { message, out } = await signAndExchange(deps.heartbeat, sender, {
    sbd: sbd.xml,
    header,
    receiverCertificate,
    timestamp: firstAttemptAt,
    ids,
    url: route.endpointUrl,
  });
  await recordSentExchange(deps.reportingItems, out.outcome, {
    messageId: message.messageId,
    header: { ...header, countryC1: route.countryC1 },
    receiverCertificate,
  });
  forgetOnFailure(sender, out.outcome, route.receiver);
  const result: SendPeppolOutcome = {
    outcome: out.outcome,
    messageId: message.messageId,
    endpoint: route.endpointUrl,
    ...(out.httpStatus !== undefined ? { httpStatus: out.httpStatus } : {}),
    ...('reason' in out ? { reason: out.reason } : {}),
    ...(out.outcome === 'delivered' ? { receiptMessageId: out.receiptMessageId } : {}),
  };
  const status = out.httpStatus !== undefined ? `HTTP ${out.httpStatus}` : 'no HTTP answer';
  const reason = result.reason ? `: ${result.reason}` : '';
  await deps.documents.recordTransition(input.tenantId, input.documentId, Transition.sendAttempt, {
    generation: input.generation,
    attempt: input.attempt,
    detail:
      `attempt ${input.attempt} to ${formatId(route.receiver)} at ${route.endpointUrl} ` +
      `(AS4 MessageId ${message.messageId}): ${out.outcome}, ${status}${reason}`,
  });
  return result;
}
