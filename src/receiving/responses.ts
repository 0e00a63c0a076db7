/**
 * Received business documents that are not invoices: a buyer's Invoice Response about a sales invoice of ours, an
 * Order, and an Order Response about an order of ours. Each is stored as the addressed party's document
 * (downloadable), read for what its event needs and announced on its own topics (InvoiceResponseReceived, OrderReceived,
 * OrderResponseReceived); one that cannot be read is stored and announced on its kind's error topic with the precise
 * reason, never as InvoiceReceivedError (that topic is for invoices and credit notes). An Invoice Response is matched
 * to the sales invoice it answers (its number and issue date, sent from the seller endpoint the response is addressed
 * to, within the tenant of the addressed party only) and the buyer's verdict goes on that invoice's history as a keyed
 * insert that never hides its final delivery state.
 */
import { DocumentState, Transition, invoiceResponseKey } from '../core/document-states';
import { DOCTYPE_SCHEME_BUSDOX, formatId } from '../peppol/identifiers';
import {
  INVOICE_RESPONSE_CUSTOMIZATION_ID,
  INVOICE_RESPONSE_STATUS,
  STATUS_ACTIONS,
  STATUS_REASONS,
  readInvoiceResponse,
  type InvoiceResponse,
} from '../peppol/invoice-response';
import {
  ORDER_CUSTOMIZATION_ID,
  ORDER_RESPONSE_CODES,
  ORDER_RESPONSE_CUSTOMIZATION_ID,
  readOrder,
  readOrderResponse,
} from '../peppol/orders';
import type { SentReference, SentReferenceRepository } from '../storage/peppol/sent-reference.repository';
import type { DocumentRepository } from '../storage/document.repository';
import type { DirectoryRepository } from '../storage/directory.repository';
import type { EventSink } from '../sending/ports';
import type { DetectionOutcome } from '../../workflows/contracts/send-invoice';
import type { ReceivedDocumentInput, ReceivedDocumentOutcome } from '../../workflows/contracts/receive-document';
import type { PublishEventInput } from '../webhooks/publish';
import { validationDetails } from './validation';

export type ReceivedKind = 'invoice-response' | 'order' | 'order-response';

/** Each kind's topics and name (spec 6.2: "order topics exist with comparable structure"). */
export const RECEIVED_KIND_TOPICS = {
  'invoice-response': {
    received: 'InvoiceResponseReceived',
    error: 'InvoiceResponseReceivedError',
    name: 'Invoice response',
  },
  order: { received: 'OrderReceived', error: 'OrderReceivedError', name: 'Order' },
  'order-response': { received: 'OrderResponseReceived', error: 'OrderResponseReceivedError', name: 'Order response' },
} as const;

const KIND_OF_FORMAT: Readonly<Record<string, ReceivedKind>> = {
  'peppol-invoice-response': 'invoice-response',
  'peppol-order': 'order',
  'peppol-order-response': 'order-response',
};

/** The customization each kind's SBDH document type carries (`…##<customization>::2.1`). */
const KIND_OF_CUSTOMIZATION: ReadonlyArray<[string, ReceivedKind]> = [
  [`::ApplicationResponse##${INVOICE_RESPONSE_CUSTOMIZATION_ID}`, 'invoice-response'],
  [`::Order##${ORDER_CUSTOMIZATION_ID}`, 'order'],
  [`::OrderResponse##${ORDER_RESPONSE_CUSTOMIZATION_ID}`, 'order-response'],
];

/**
 * The kind of a received document: by its SBDH document type (so a document of the kind that cannot be read still
 * gets its kind's error topic), else by what detection found; null for invoices, MLS and everything else.
 */
export function receivedKindOf(sbdhDocumentType: string | undefined, detection: DetectionOutcome): ReceivedKind | null {
  if (sbdhDocumentType) {
    for (const [marker, kind] of KIND_OF_CUSTOMIZATION) if (sbdhDocumentType.includes(marker)) return kind;
  }
  return detection.ok ? (KIND_OF_FORMAT[detection.format.id] ?? null) : null;
}

export interface ResponseDeps {
  documents: Pick<DocumentRepository, 'recordTransition' | 'appendHistory'>;
  directory: Pick<DirectoryRepository, 'findParty'>;
  events: EventSink;
  sentReferences: Pick<SentReferenceRepository, 'find'>;
}

/** What the register step knows of the received document. */
export interface ReceivedOrigin {
  documentId: string;
  /** The party it was addressed to. */
  partyId: string;
  bytes: Buffer;
  /** The SBDH sender, or the document's own sender endpoint when injected (`unknown` without one). */
  sender: string;
  /** `busdox-docid-qns::…`, or empty. */
  documentTypeId: string;
  createdBy: string;
  /** The AS4 message it came in (none when injected). */
  messageId?: string;
}

/** What reading a received document of a kind gives: its event's facts and, for a response, its match. */
interface ReadKind {
  message: string;
  details: Record<string, string>;
  refToDocumentId: string;
  /** The matched document's party, which becomes the received document's party (the addressed one otherwise). */
  matchedPartyId?: string;
  /** Runs once the received document's own entries are written. */
  record?: () => Promise<void>;
}

/** The sales invoice an Invoice Response answers: ours, sent from the endpoint it is addressed to, same number and date. */
export async function matchInvoiceResponse(
  refs: Pick<SentReferenceRepository, 'find'>,
  response: InvoiceResponse,
  tenantId: string,
): Promise<SentReference | null> {
  const ref = await refs.find({
    tenantId,
    endpoint: response.receiver.value,
    kind: 'invoice',
    number: response.invoice.id,
  });
  if (!ref || ref.tenantId !== tenantId) return null;
  // A response naming another issue date answers another invoice under the same number.
  if (response.invoice.issueDate && ref.issueDate && response.invoice.issueDate !== ref.issueDate) return null;
  return ref;
}

function clarificationText(r: InvoiceResponse): string {
  return r.clarifications
    .map((c) => {
      const table: Readonly<Record<string, string>> = c.listId === 'OPStatusAction' ? STATUS_ACTIONS : STATUS_REASONS;
      return `${c.code}${table[c.code] ? ` (${table[c.code]})` : ''}${c.text ? `: ${c.text}` : ''}`;
    })
    .join('; ');
}

/** The history detail of a buyer's verdict on the sales invoice it answers. */
export function invoiceResponseHistoryDetail(r: InvoiceResponse, responseDocumentId: string): string {
  const why = r.clarifications.length ? `; ${clarificationText(r)}` : '';
  const note = r.note ? `; note: ${r.note}` : '';
  return (
    `Invoice response ${r.statusCode} (${INVOICE_RESPONSE_STATUS[r.statusCode]}) from ${formatId(r.sender)}` +
    `${why}${note} (response document ${responseDocumentId})`
  ).slice(0, 1000);
}

async function readInvoiceResponseKind(
  deps: ResponseDeps,
  tenantId: string,
  origin: ReceivedOrigin,
): Promise<ReadKind | string> {
  const read = readInvoiceResponse(origin.bytes);
  if (!read.ok) return read.reason;
  const r = read.response;
  const match = await matchInvoiceResponse(deps.sentReferences, r, tenantId);
  const about = match ? `sales invoice ${match.documentId}` : `unknown invoice ${r.invoice.id}`;
  const reasons = r.clarifications.filter((c) => c.listId === 'OPStatusReason');
  const actions = r.clarifications.filter((c) => c.listId === 'OPStatusAction');
  return {
    message:
      `Invoice response ${r.statusCode} (${INVOICE_RESPONSE_STATUS[r.statusCode]}) received from ` +
      `${formatId(r.sender)} for ${about}`,
    refToDocumentId: match?.documentId ?? '',
    ...(match ? { matchedPartyId: match.partyId } : {}),
    details: {
      statusCode: r.statusCode,
      status: INVOICE_RESPONSE_STATUS[r.statusCode],
      description: r.note ?? '',
      statusReasonCodes: reasons.map((c) => c.code).join(','),
      statusReasons: reasons
        .flatMap((c) => (c.text ? [c.text] : []))
        .join('; ')
        .slice(0, 1000),
      statusActionCodes: actions.map((c) => c.code).join(','),
      responseId: r.id,
      invoiceId: r.invoice.id,
      invoiceIssueDate: r.invoice.issueDate ?? '',
      profileId: r.profileId,
    },
    ...(match
      ? {
          record: async () => {
            await deps.documents.appendHistory(match.tenantId, match.documentId, {
              key: invoiceResponseKey(origin.documentId),
              state: DocumentState.InvoiceResponseReceived,
              responseCode: r.statusCode,
              detail: invoiceResponseHistoryDetail(r, origin.documentId),
            });
          },
        }
      : {}),
  };
}

function readOrderKind(origin: ReceivedOrigin): ReadKind | string {
  const read = readOrder(origin.bytes);
  if (!read.ok) return read.reason;
  const o = read.value;
  return {
    message: `Order ${o.id} received from ${o.buyer ? formatId(o.buyer) : origin.sender}`,
    refToDocumentId: '',
    details: {
      orderId: o.id,
      orderIssueDate: o.issueDate,
      buyer: o.buyer ? formatId(o.buyer) : '',
      seller: o.seller ? formatId(o.seller) : '',
    },
  };
}

async function readOrderResponseKind(
  deps: ResponseDeps,
  tenantId: string,
  origin: ReceivedOrigin,
): Promise<ReadKind | string> {
  const read = readOrderResponse(origin.bytes);
  if (!read.ok) return read.reason;
  const r = read.value;
  // Our order went from our buyer endpoint; the response names it by its number.
  const match = r.buyer
    ? await deps.sentReferences.find({ tenantId, endpoint: r.buyer.value, kind: 'order', number: r.orderId })
    : null;
  const matched = match && match.tenantId === tenantId ? match : null;
  return {
    message:
      `Order response ${r.responseCode} (${ORDER_RESPONSE_CODES[r.responseCode]}) received from ` +
      `${r.seller ? formatId(r.seller) : origin.sender} for ${matched ? `order ${matched.documentId}` : `unknown order ${r.orderId}`}`,
    refToDocumentId: matched?.documentId ?? '',
    ...(matched ? { matchedPartyId: matched.partyId } : {}),
    details: {
      statusCode: r.responseCode,
      status: ORDER_RESPONSE_CODES[r.responseCode] ?? '',
      description: r.note ?? '',
      responseId: r.id,
      orderId: r.orderId,
      buyer: r.buyer ? formatId(r.buyer) : '',
      seller: r.seller ? formatId(r.seller) : '',
    },
  };
}

/**
 * Reads a received invoice response, order or order response: what its event says, and (for a response) the document
 * of ours it answers. A string is the reason it cannot be read. Reading comes before storing, so the document goes to
 * the party whose document it answers.
 */
export async function readReceivedKind(
  deps: ResponseDeps,
  tenantId: string,
  kind: ReceivedKind,
  origin: ReceivedOrigin,
  detection: DetectionOutcome,
): Promise<ReadKind | string> {
  if (!detection.ok) return `${detection.code}: ${detection.message}`;
  if (KIND_OF_FORMAT[detection.format.id] !== kind)
    return `the document is ${detection.format.name}, not the ${RECEIVED_KIND_TOPICS[kind].name.toLowerCase()} its envelope announces`;
  if (kind === 'invoice-response') return readInvoiceResponseKind(deps, tenantId, origin);
  if (kind === 'order') return readOrderKind(origin);
  return readOrderResponseKind(deps, tenantId, origin);
}

/**
 * Records and announces a received document of a kind, read by readReceivedKind: its detection entry (with the
 * validation entry the validate step wrote, or a not-validated one), the matched document's entry, then its event.
 */
export async function registerKind(
  deps: ResponseDeps,
  input: ReceivedDocumentInput,
  kind: ReceivedKind,
  origin: ReceivedOrigin & { partyId: string },
  read: ReadKind | string,
): Promise<ReceivedDocumentOutcome> {
  const { detection } = input;
  const topics = RECEIVED_KIND_TOPICS[kind];
  const documentTypeId =
    origin.documentTypeId ||
    (detection.ok && detection.format.documentTypeId
      ? formatId({ scheme: DOCTYPE_SCHEME_BUSDOX, value: detection.format.documentTypeId })
      : '');
  const party = await deps.directory.findParty(origin.partyId);
  const common = {
    id: input.eventId,
    tenantId: input.tenantId,
    party:
      party && party.tenantId === input.tenantId
        ? { partyId: party.partyId, legalEntityId: party.legalEntityId }
        : null,
    documentId: origin.documentId,
    createdBy: origin.createdBy,
  };
  const base = {
    id: origin.documentId,
    sender: origin.sender,
    createdBy: origin.createdBy,
    documentTypeId,
    ...(origin.messageId ? { messageId: origin.messageId } : {}),
  };
  if (typeof read === 'string') {
    const reason = read.slice(0, 500);
    await deps.documents.recordTransition(input.tenantId, origin.documentId, Transition.receivedOtherUnreadable, {
      detail: `${topics.name} unreadable: ${reason}`,
    });
    const event: PublishEventInput = {
      ...common,
      topic: topics.error,
      refToDocumentId: '',
      message: `${topics.name} received from ${origin.sender} could not be read: ${reason}`,
      details: {
        ...base,
        reason,
        ...(detection.ok ? { formatId: detection.format.id } : { reasonCode: detection.code }),
      },
    };
    const published = await deps.events.publishEvent(event);
    // The validation entry stands after the detection entry: a document the official rules refused reads `invalid`.
    const state = input.validation?.kind === 'invalid' ? DocumentState.Invalid : DocumentState.Rejected;
    return { documentId: origin.documentId, state, eventId: published.event.id, topic: topics.error };
  }
  await deps.documents.recordTransition(
    input.tenantId,
    origin.documentId,
    Transition.receivedOther,
    { detail: detection.ok ? detection.format.id : kind },
    detection.ok ? { format: { ...detection.format } } : {},
  );
  if (input.validation?.kind === 'not-validated') {
    // The validate step records its own verdict; a run whose validation could not run at all records it here.
    await deps.documents.recordTransition(input.tenantId, origin.documentId, Transition.notValidated, {
      detail: input.validation.reason,
    });
  }
  await read.record?.();
  const event: PublishEventInput = {
    ...common,
    topic: topics.received,
    refToDocumentId: read.refToDocumentId,
    message: read.message,
    details: { ...base, ...read.details, ...validationDetails(input.validation) },
  };
  const published = await deps.events.publishEvent(event);
  const state =
    input.validation?.kind === 'valid'
      ? DocumentState.Validated
      : input.validation?.kind === 'invalid'
        ? DocumentState.Invalid
        : input.validation
          ? DocumentState.NotValidated
          : DocumentState.Detected;
  return {
    documentId: origin.documentId,
    state,
    eventId: published.event.id,
    topic: topics.received,
    ...(read.refToDocumentId || kind !== 'order' ? { refToDocumentId: read.refToDocumentId || null } : {}),
  };
}
