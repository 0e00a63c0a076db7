/**
 * Sending an uploaded purchase order (Peppol BIS Ordering 3, T01): our party is the buyer and sends it to the seller.
 * The check: the upload is a Peppol Order 3 (detection), the pinned official rules accept it, its buyer (the SBDH
 * sender) is the uploading party or a party of the same legal entity (the sales invoice's sender check, buyer side),
 * and it names a seller electronic address. Each attempt goes through the shared AS4 step (./as4-send.ts) to the
 * seller, found with the SML/SMP lookup for the Order document type and the Ordering process; before the first one the
 * order's number is kept (a received Order Response names the order by it). The events carry InvoiceSent's structure.
 */
import { detectionOutcome } from '../documents/detection';
import { loadDocument } from '../documents/loader';
import { readBusinessReference } from '../peppol/business-reference';
import { formatId } from '../peppol/identifiers';
import {
  ORDERING_PROCESS,
  ORDER_DOCUMENT_TYPE,
  participantOfParty,
  readOrderForResponse,
} from '../peppol/order-response';
import type { DirectoryRepository } from '../storage/directory.repository';
import type {
  CheckOrderResult,
  OrderEventInput,
  SendOrderAttempt,
  SendOrderAttemptResult,
} from '../../workflows/contracts/send-order';
import { peppolSenderOf, sendOverAs4, type As4SendDeps } from './as4-send';
import { legalEntityOf, recordDetection, validate } from './check-document';
import type { SendInvoiceDeps, EventSink } from './ports';
import { mayActFor } from './sender-check';
import { publishSentDocumentEvent, sentEventKind } from './sent-document-event';

/** The format id of a Peppol Order 3 (src/formats/catalogue.ts). */
export const ORDER_FORMAT_ID = 'peppol-order';

export interface OrderSendDeps
  extends As4SendDeps, Pick<SendInvoiceDeps, 'validator' | 'sentInstances' | 'sentReferences'> {
  directory: Pick<DirectoryRepository, 'findParty' | 'listParties'>;
  events: EventSink;
}

/** Why an uploaded document is not a Peppol order this party may send, or null (the API's answer before storing). */
export async function orderUploadProblem(
  deps: Pick<OrderSendDeps, 'directory'>,
  tenantId: string,
  party: { partyId: string; legalEntityId: string | null },
  bytes: Buffer,
): Promise<Exclude<CheckOrderResult, { ok: true }> | null> {
  const detection = detectionOutcome(bytes);
  if (!detection.ok) return { ok: false, stage: 'detection', reasonCode: detection.code, reason: detection.message };
  if (detection.format.id !== ORDER_FORMAT_ID)
    return {
      ok: false,
      stage: 'detection',
      reasonCode: 'WRONG_FORMAT',
      reason: `the document is a ${detection.format.name} (${detection.format.id}), not a Peppol Order 3`,
    };
  return buyerProblem(deps, tenantId, party, bytes);
}

async function buyerProblem(
  deps: Pick<OrderSendDeps, 'directory'>,
  tenantId: string,
  party: { partyId: string; legalEntityId: string | null },
  bytes: Buffer,
): Promise<Exclude<CheckOrderResult, { ok: true }> | null> {
  const order = readOrderForResponse(bytes);
  if (typeof order === 'string') return { ok: false, stage: 'routing', reasonCode: 'UNPROCESSABLE', reason: order };
  const buyer = `${order.buyer.endpoint.scheme}:${order.buyer.endpoint.value}`;
  if (!(await mayActFor(deps, tenantId, party, buyer)))
    return {
      ok: false,
      stage: 'sender',
      reasonCode: 'SENDER_NOT_ALLOWED',
      reason:
        `the order's buyer ${buyer} (BuyerCustomerParty EndpointID, the Peppol sender) is not the party ` +
        `${party.partyId} it was uploaded for, nor a party of the same legal entity`,
    };
  return null;
}

/** The check step: detection and validation on the record, then the buyer. */
export async function checkOrder(
  deps: OrderSendDeps,
  input: { tenantId: string; documentId: string },
): Promise<CheckOrderResult> {
  const { stored, bytes } = await loadDocument(deps, input.tenantId, input.documentId);
  const detection = detectionOutcome(bytes);
  if (detection.ok && detection.format.id !== ORDER_FORMAT_ID) {
    const refused = {
      ok: false as const,
      code: 'WRONG_FORMAT',
      message: `${detection.format.id} is not a Peppol Order 3`,
    };
    await recordDetection(deps, input, refused);
    return { ok: false, stage: 'detection', reasonCode: refused.code, reason: refused.message };
  }
  await recordDetection(deps, input, detection);
  if (!detection.ok) return { ok: false, stage: 'detection', reasonCode: detection.code, reason: detection.message };
  const validation = await validate(deps, input, bytes, ORDER_FORMAT_ID);
  if (validation.kind === 'invalid')
    return {
      ok: false,
      stage: 'validation',
      reasonCode: validation.reasonCodes.join(','),
      reason: `Invalid payload: ${validation.summary}`,
    };
  if (validation.kind === 'not-validated')
    // Peppol carries validated documents only.
    return { ok: false, stage: 'validation', reasonCode: 'NOT_VALIDATED', reason: validation.reason };
  const party = {
    partyId: stored.partyId,
    legalEntityId: stored.legalEntityId ?? (await legalEntityOf(deps, input.tenantId, stored.partyId)),
  };
  const refused = await buyerProblem(deps, input.tenantId, party, bytes);
  if (refused) return refused;
  const order = readOrderForResponse(bytes);
  return { ok: true, orderId: typeof order === 'string' ? '' : order.id };
}

/** One attempt to send the order to its seller. Our own infrastructure failures throw; the peer's are results. */
export async function sendOrderAttempt(deps: OrderSendDeps, input: SendOrderAttempt): Promise<SendOrderAttemptResult> {
  peppolSenderOf(deps);
  const { stored, bytes } = await loadDocument(deps, input.tenantId, input.documentId);
  const order = readOrderForResponse(bytes);
  if (typeof order === 'string') return { outcome: 'failed', to: '', endpoint: '', messageId: '', reason: order };
  const buyer = participantOfParty(order.buyer);
  const seed = `${input.tenantId}:order:${input.documentId}`;
  if (input.attempt === 1) {
    // A received Order Response names the order by its number (an MLS its message: recorded by sendOverAs4).
    const ref = readBusinessReference(bytes);
    if (ref && deps.sentReferences) {
      await deps.sentReferences.record({
        tenantId: input.tenantId,
        endpoint: buyer.value,
        ...ref,
        documentId: input.documentId,
        partyId: stored.partyId,
        generation: 0,
      });
    }
  }
  return sendOverAs4(deps, {
    tenantId: input.tenantId,
    documentId: input.documentId,
    partyId: stored.partyId,
    bytes,
    sender: buyer,
    receiver: participantOfParty(order.seller),
    documentType: ORDER_DOCUMENT_TYPE,
    process: ORDERING_PROCESS,
    countryC1: order.buyer.country ?? 'ZZ',
    idSeed: seed,
    attempt: input.attempt,
    firstAttemptAt: new Date(input.firstAttemptAt),
    label: `Order ${order.id}`,
  });
}

/**
 * OrderSent / OrderSentRetry / OrderSentError (InvoiceSent's structure, spec 6.3) with the order's number; a retry
 * and a final error also go on the order's history. The event id comes from the workflow: a retried step publishes
 * once.
 */
export async function publishOrderEvent(deps: OrderSendDeps, input: OrderEventInput): Promise<{ eventId: string }> {
  const { stored, bytes } = await loadDocument(deps, input.tenantId, input.documentId);
  const order = readOrderForResponse(bytes);
  const orderId = typeof order === 'string' ? '' : order.id;
  return publishSentDocumentEvent(deps, {
    ...input,
    kind: sentEventKind(input.topic),
    stored: true,
    partyId: stored.partyId,
    to: input.to || (typeof order === 'string' ? '' : formatId(participantOfParty(order.seller))),
    what: `Order ${orderId || input.documentId}`,
    failed: 'not sent',
    details: {
      orderId,
      documentTypeId: formatId(ORDER_DOCUMENT_TYPE),
      ...(input.stage !== undefined ? { stage: input.stage } : {}),
      ...(input.reasonCode !== undefined ? { reasonCode: input.reasonCode } : {}),
    },
  });
}

export interface OrderSendingSteps {
  checkOrder: (input: { tenantId: string; documentId: string }) => Promise<CheckOrderResult>;
  sendOrderAttempt: (input: SendOrderAttempt) => Promise<SendOrderAttemptResult>;
  publishOrderEvent: (input: OrderEventInput) => Promise<{ eventId: string }>;
}

export function createOrderSending(deps: OrderSendDeps): OrderSendingSteps {
  return {
    checkOrder: (input) => checkOrder(deps, input),
    sendOrderAttempt: (input) => sendOrderAttempt(deps, input),
    publishOrderEvent: (input) => publishOrderEvent(deps, input),
  };
}
