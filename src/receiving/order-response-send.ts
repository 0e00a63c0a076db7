/**
 * Sending an Order Response (Peppol BIS Ordering 3, T76) for a received order: our party is the seller and answers the
 * buyer. The response is built from the received order (its number, currency, parties and lines) and the seller's
 * verdict, checked with the pinned official rules (a response they refuse is never sent), stored once as an outbound
 * document of the party (one per order and response code: its id, issue time and AS4 ids derive from them and the
 * first attempt, so every attempt is the same message) and sent through the shared AS4 step to the buyer.
 */
import { GatewayError } from '../core/gateway-error';
import { nameBasedUuid } from '../ids/name-uuid';
import { formatId, type ParticipantId } from '../peppol/identifiers';
import { ORDER_RESPONSE_CODES, ORDER_RESPONSE_CUSTOMIZATION_ID } from '../peppol/orders';
import {
  ORDERING_PROCESS,
  ORDERING_PROFILE_ID,
  ORDER_RESPONSE_DOCUMENT_TYPE,
  buildOrderResponse,
  orderResponseFitProblem,
  orderResponseInputProblem,
  participantOfParty,
  readOrderForResponse,
  type OrderResponseSpec,
} from '../peppol/order-response';
import { sendAnswerAttempt, type As4SendDeps } from '../sending/as4-send';
import type { DocumentValidator } from '../sending/ports';
import type {
  OrderResponseEventInput,
  SendOrderResponseAttempt,
  SendOrderResponseAttemptResult,
} from '../../workflows/contracts/send-order-response';
import { publishSentDocumentEvent, sentEventKind, type SentDocumentEventDeps } from '../sending/sent-document-event';

/** Namespace of the ids of the Order Responses we send (fixed once). */
export const SENT_ORDER_RESPONSE_NAMESPACE = '3e9c1b7a-5f24-4d81-a6c3-92b0d4e8f175';

/** The documentId of the response a party sends for a received order with a code: one per (order, code). */
export function sentOrderResponseId(tenantId: string, orderDocumentId: string, responseCode: string): string {
  return nameBasedUuid(SENT_ORDER_RESPONSE_NAMESPACE, [tenantId, orderDocumentId, responseCode]);
}

export interface BuiltOrderResponse {
  xml: string;
  /** The buyer (the order's BuyerCustomerParty EndpointID): the receiver. */
  buyer: ParticipantId;
  /** The seller: the SBDH sender. */
  seller: ParticipantId;
  /** The seller's country, for the SBDH's C1 country. */
  country?: string;
}

/** The Order Response for a received order, or why none can be built (a string: the order or the verdict). */
export function orderResponseFor(
  orderBytes: Buffer,
  spec: OrderResponseSpec,
  meta: { id: string; issuedAt: Date },
): BuiltOrderResponse | string {
  const problem = orderResponseInputProblem(spec);
  if (problem) return problem;
  const order = readOrderForResponse(orderBytes);
  if (typeof order === 'string') return order;
  const misfit = orderResponseFitProblem(spec, order);
  if (misfit) return misfit;
  const xml = buildOrderResponse({ ...meta, spec, order });
  return {
    xml,
    buyer: participantOfParty(order.buyer),
    seller: participantOfParty(order.seller),
    ...(order.seller.country ? { country: order.seller.country } : {}),
  };
}

export interface OrderResponseSendDeps extends As4SendDeps {
  validator: DocumentValidator;
}

const notFound = (documentId: string, why: string) =>
  new GatewayError('DOCUMENT_NOT_FOUND', `received order ${documentId} ${why}`);

const ORDER_RESPONSE_FORMAT = {
  id: 'peppol-order-response',
  name: 'Peppol Order Response 3',
  syntax: 'UBL',
  documentType: 'OrderResponse',
  customizationId: ORDER_RESPONSE_CUSTOMIZATION_ID,
  profileId: ORDERING_PROFILE_ID,
  documentTypeId: ORDER_RESPONSE_DOCUMENT_TYPE.value,
};

function specOf(input: SendOrderResponseAttempt): OrderResponseSpec {
  return {
    responseCode: input.responseCode,
    ...(input.note !== undefined ? { note: input.note } : {}),
    ...(input.lines ? { lines: input.lines } : {}),
  };
}

/** One attempt to send the seller's response. Our own infrastructure failures throw; the peer's are results. */
export async function sendOrderResponseAttempt(
  deps: OrderResponseSendDeps,
  input: SendOrderResponseAttempt,
): Promise<SendOrderResponseAttemptResult> {
  const { answerDocumentId, ...sent } = await sendAnswerAttempt(deps, {
    ...input,
    answerDocumentId: sentOrderResponseId(input.tenantId, input.documentId, input.responseCode),
    build: (orderBytes, meta) => {
      const route = orderResponseFor(orderBytes, specOf(input), meta);
      return typeof route === 'string'
        ? route
        : {
            xml: route.xml,
            sender: route.seller,
            receiver: route.buyer,
            ...(route.country ? { country: route.country } : {}),
          };
    },
    kind: 'order-response',
    format: ORDER_RESPONSE_FORMAT,
    what: 'order response',
    documentType: ORDER_RESPONSE_DOCUMENT_TYPE,
    process: ORDERING_PROCESS,
    label: `Order response ${input.responseCode}`,
  });
  return { ...sent, responseDocumentId: answerDocumentId };
}

export type OrderResponseEventDeps = SentDocumentEventDeps;

/**
 * OrderResponseSent / OrderResponseSentRetry / OrderResponseSentError (InvoiceSent's structure): `documentId` the
 * response, `refToDocumentId` the received order it answers. A retry and a final error also go on the response's
 * history (when it was stored).
 */
export async function publishOrderResponseEvent(
  deps: OrderResponseEventDeps,
  input: OrderResponseEventInput,
): Promise<{ eventId: string }> {
  const received = await deps.documents.findStored(input.tenantId, input.documentId);
  if (!received) throw notFound(input.documentId, 'not found');
  const stored = await deps.documents.findStored(input.tenantId, input.responseDocumentId);
  const status = ORDER_RESPONSE_CODES[input.responseCode] ?? input.responseCode;
  return publishSentDocumentEvent(deps, {
    ...input,
    kind: sentEventKind(input.topic),
    documentId: input.responseDocumentId,
    stored: stored !== null,
    refToDocumentId: input.documentId,
    partyId: received.partyId,
    what: `Order response ${input.responseCode} (${status}) for order ${input.documentId}`,
    failed: 'could not be delivered',
    details: {
      statusCode: input.responseCode,
      status,
      targetDocumentTypeId: formatId(ORDER_RESPONSE_DOCUMENT_TYPE),
    },
  });
}

export interface OrderResponseSendingSteps {
  sendOrderResponseAttempt: (input: SendOrderResponseAttempt) => Promise<SendOrderResponseAttemptResult>;
  publishOrderResponseEvent: (input: OrderResponseEventInput) => Promise<{ eventId: string }>;
}

export function createOrderResponseSending(
  deps: OrderResponseSendDeps & OrderResponseEventDeps,
): OrderResponseSendingSteps {
  return {
    sendOrderResponseAttempt: (input) => sendOrderResponseAttempt(deps, input),
    publishOrderResponseEvent: (input) => publishOrderResponseEvent(deps, input),
  };
}
