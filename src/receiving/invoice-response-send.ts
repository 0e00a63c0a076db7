/**
 * Sending an Invoice Response (Peppol BIS Invoice Response 3) for a received invoice: our party is the buyer (C4)
 * and answers the supplier (C1) with its verdict. The response is built from the received invoice (its number, issue
 * date and type; the supplier's and the buyer's electronic addresses and names), checked with the pinned official
 * rules when they are there, stored once as an outbound document of the party (one per invoice and status: its id,
 * issue time and AS4 ids derive from them and the first attempt, so every attempt is the same message) and sent over
 * AS4 to the supplier, found with the send path's SML/SMP lookup. Each attempt goes on the response's history; what
 * the peer answers is a result.
 */
import { GatewayError, isGatewayError } from '../core/gateway-error';
import { nameBasedUuid } from '../ids/name-uuid';
import { formatId, participantIdProblem, peppolParticipant, type ParticipantId } from '../peppol/identifiers';
import {
  INVOICE_RESPONSE_CUSTOMIZATION_ID,
  INVOICE_RESPONSE_DOCUMENT_TYPE,
  INVOICE_RESPONSE_PROCESS,
  INVOICE_RESPONSE_PROFILE_ID,
  INVOICE_RESPONSE_STATUS,
  buildInvoiceResponse,
  invoiceResponseInputProblem,
  type StatusActionCode,
  type StatusReasonCode,
} from '../peppol/invoice-response';
import type { DocumentValidator } from '../sending/ports';
import { readInvoiceModel } from '../transform/transform';
import type {
  InvoiceResponseEventInput,
  SendInvoiceResponseAttempt,
  SendInvoiceResponseAttemptResult,
} from '../../workflows/contracts/send-invoice-response';
import { sendAnswerAttempt, type As4SendDeps } from '../sending/as4-send';
import { publishSentDocumentEvent, sentEventKind, type SentDocumentEventDeps } from '../sending/sent-document-event';

/** Namespace of the ids of the Invoice Responses we send (fixed once). */
export const SENT_INVOICE_RESPONSE_NAMESPACE = '8b2f4e61-3c7a-4d95-b1e8-0a6c5d9f2e47';

/** The documentId of the response a party sends for a received invoice with a status: one per (invoice, status). */
export function sentInvoiceResponseId(tenantId: string, invoiceDocumentId: string, statusCode: string): string {
  return nameBasedUuid(SENT_INVOICE_RESPONSE_NAMESPACE, [tenantId, invoiceDocumentId, statusCode]);
}

/** What the buyer says: the API's body, checked. */
export interface InvoiceResponseSpec {
  statusCode: SendInvoiceResponseAttempt['statusCode'];
  note?: string;
  reasons?: ReadonlyArray<{ code: string; text?: string }>;
  actions?: ReadonlyArray<{ code: string; text?: string }>;
}

/** A built response: its XML and who it goes from and to. */
export interface BuiltInvoiceResponse {
  xml: string;
  /** The supplier (seller electronic address, BT-34). */
  supplier: ParticipantId;
  /** The buyer (buyer electronic address, BT-49): the SBDH sender. */
  buyer: ParticipantId;
  /** The buyer's country (BT-55), for the SBDH's C1 country. */
  country?: string;
}

function participantOf(
  address: { value: string; schemeId?: string } | undefined,
  role: string,
): { participant: ParticipantId; written: { scheme: string; value: string } } | string {
  if (!address?.schemeId || !address.value) return `the invoice has no ${role} electronic address with a scheme`;
  const value = `${address.schemeId}:${address.value}`;
  const problem = participantIdProblem('iso6523-actorid-upis', value);
  if (problem) return `the invoice's ${role} electronic address ${value} is not a Peppol participant: ${problem}`;
  return { participant: peppolParticipant(value), written: { scheme: address.schemeId, value: address.value } };
}

/**
 * The Invoice Response for a received invoice, or why none can be built from it (a string: the invoice lacks what
 * the response must name, or is no invoice the gateway reads).
 */
export function invoiceResponseFor(
  invoiceBytes: Buffer,
  spec: InvoiceResponseSpec,
  meta: { id: string; issuedAt: Date },
): BuiltInvoiceResponse | string {
  const problem = invoiceResponseInputProblem(spec);
  if (problem) return problem;
  let invoice: ReturnType<typeof readInvoiceModel>['invoice'];
  try {
    invoice = readInvoiceModel(invoiceBytes).invoice;
  } catch (e) {
    return `the received document cannot be read as an invoice: ${isGatewayError(e) ? e.message : String(e)}`;
  }
  if (!invoice.number) return 'the invoice has no number (BT-1)';
  const supplier = participantOf(invoice.seller.electronicAddress, 'seller');
  if (typeof supplier === 'string') return supplier;
  const buyer = participantOf(invoice.buyer.electronicAddress, 'buyer');
  if (typeof buyer === 'string') return buyer;
  const xml = buildInvoiceResponse({
    id: meta.id,
    issuedAt: meta.issuedAt,
    statusCode: spec.statusCode,
    ...(spec.note !== undefined ? { note: spec.note } : {}),
    reasons: (spec.reasons ?? []).map((r) => ({
      code: r.code as StatusReasonCode,
      ...(r.text ? { text: r.text } : {}),
    })),
    actions: (spec.actions ?? []).map((a) => ({
      code: a.code as StatusActionCode,
      ...(a.text ? { text: a.text } : {}),
    })),
    sender: { endpoint: buyer.written, name: invoice.buyer.name || buyer.written.value },
    receiver: { endpoint: supplier.written, name: invoice.seller.name || supplier.written.value },
    invoice: {
      id: invoice.number,
      ...(invoice.issueDate ? { issueDate: invoice.issueDate } : {}),
      typeCode: invoice.typeCode ?? '380',
    },
  });
  const country = invoice.buyer.postalAddress?.countryCode;
  return { xml, supplier: supplier.participant, buyer: buyer.participant, ...(country ? { country } : {}) };
}

export interface InvoiceResponseSendDeps extends As4SendDeps {
  /** The official-rule validator: a response the pinned rules refuse is never sent. */
  validator: DocumentValidator;
}

const notFound = (documentId: string, why: string) =>
  new GatewayError('DOCUMENT_NOT_FOUND', `received invoice ${documentId} ${why}`);

/** One attempt to send the buyer's response. Our own infrastructure failures throw; the peer's are results. */
export async function sendInvoiceResponseAttempt(
  deps: InvoiceResponseSendDeps,
  input: SendInvoiceResponseAttempt,
): Promise<SendInvoiceResponseAttemptResult> {
  const { answerDocumentId, ...sent } = await sendAnswerAttempt(deps, {
    ...input,
    answerDocumentId: sentInvoiceResponseId(input.tenantId, input.documentId, input.statusCode),
    build: (invoiceBytes, meta) => {
      const route = invoiceResponseFor(invoiceBytes, input, meta);
      return typeof route === 'string'
        ? route
        : {
            xml: route.xml,
            sender: route.buyer,
            receiver: route.supplier,
            ...(route.country ? { country: route.country } : {}),
          };
    },
    kind: 'invoice-response',
    format: INVOICE_RESPONSE_FORMAT,
    what: 'invoice response',
    documentType: INVOICE_RESPONSE_DOCUMENT_TYPE,
    process: INVOICE_RESPONSE_PROCESS,
    label: `Invoice response ${input.statusCode}`,
  });
  return { ...sent, responseDocumentId: answerDocumentId };
}

const INVOICE_RESPONSE_FORMAT = {
  id: 'peppol-invoice-response',
  name: 'Peppol Invoice Response 3',
  syntax: 'UBL',
  documentType: 'ApplicationResponse',
  customizationId: INVOICE_RESPONSE_CUSTOMIZATION_ID,
  profileId: INVOICE_RESPONSE_PROFILE_ID,
  documentTypeId: INVOICE_RESPONSE_DOCUMENT_TYPE.value,
};

/** What publishing the InvoiceResponseSent* events needs besides the documents. */
export type InvoiceResponseEventDeps = SentDocumentEventDeps;

/**
 * InvoiceResponseSent / InvoiceResponseSentRetry / InvoiceResponseSentError (InvoiceSent's structure, spec 6.3):
 * `documentId` the response, `refToDocumentId` the received invoice it answers. The event id comes from the workflow,
 * so a retried step publishes once. A final error also goes on the response's history.
 */
export async function publishInvoiceResponseEvent(
  deps: InvoiceResponseEventDeps,
  input: InvoiceResponseEventInput,
): Promise<{ eventId: string }> {
  const received = await deps.documents.findStored(input.tenantId, input.documentId);
  if (!received) throw notFound(input.documentId, 'not found');
  const stored = await deps.documents.findStored(input.tenantId, input.responseDocumentId);
  const status = INVOICE_RESPONSE_STATUS[input.statusCode];
  return publishSentDocumentEvent(deps, {
    ...input,
    kind: sentEventKind(input.topic),
    documentId: input.responseDocumentId,
    stored: stored !== null,
    refToDocumentId: input.documentId,
    partyId: received.partyId,
    what: `Invoice response ${input.statusCode} (${status}) for invoice ${input.documentId}`,
    failed: 'could not be delivered',
    details: {
      statusCode: input.statusCode,
      status,
      targetDocumentTypeId: formatId(INVOICE_RESPONSE_DOCUMENT_TYPE),
    },
  });
}

export interface InvoiceResponseSendingSteps {
  sendInvoiceResponseAttempt: (input: SendInvoiceResponseAttempt) => Promise<SendInvoiceResponseAttemptResult>;
  publishInvoiceResponseEvent: (input: InvoiceResponseEventInput) => Promise<{ eventId: string }>;
}

export function createInvoiceResponseSending(
  deps: InvoiceResponseSendDeps & InvoiceResponseEventDeps,
): InvoiceResponseSendingSteps {
  return {
    sendInvoiceResponseAttempt: (input) => sendInvoiceResponseAttempt(deps, input),
    publishInvoiceResponseEvent: (input) => publishInvoiceResponseEvent(deps, input),
  };
}
