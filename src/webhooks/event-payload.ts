import { z } from 'zod';
import type { GatewayEvent } from '../../workflows/contracts/deliver-webhook';
import type { EventRecord } from '../storage/events/event.repository';

export type { GatewayEvent } from '../../workflows/contracts/deliver-webhook';

/** The body of a delivery (spec 6.3), keys in this order. Absent optional ids are omitted rather than null. */
export interface EventPayload {
  topic: string;
  partyId: string;
  /** The hook receiving this delivery (for HookSent* events, `details.hookId` names the failing one). */
  hookId: string;
  documentId?: string;
  refToDocumentId?: string;
  message: string;
  details: Record<string, string>;
  createdBy: string;
  createdOn: string;
  /** This attempt's time, ISO 8601 UTC: the receiver's 5-minute replay rule checks it, the signature covers it. */
  sentOn: string;
}

const str = z.string();
const detailsOf = <T extends z.ZodRawShape>(shape: T) => z.object(shape).catchall(z.string());

const invoiceSent = detailsOf({
  id: str,
  recipient: str,
  endpoint: str,
  protocol: str,
  attempt: str,
  messageId: str,
  sourceDocumentTypeId: str,
  targetDocumentTypeId: str,
});

const invoiceResponseSent = detailsOf({
  id: str,
  recipient: str,
  endpoint: str,
  protocol: str,
  attempt: str,
  messageId: str,
  statusCode: z.enum(['AB', 'IP', 'UQ', 'RE', 'AP', 'PD']),
  status: str,
});

/** A purchase order we sent (InvoiceSent's structure with the order's number). */
const orderSent = detailsOf({
  id: str,
  recipient: str,
  endpoint: str,
  protocol: str,
  attempt: str,
  messageId: str,
  orderId: str,
  documentTypeId: str,
});

/**
 * A tax report of an invoice (digital reporting): the reporter role (C2 supplier side, C3 buyer side), the country and
 * tax authority, the Tax Data Document (`reportDocumentId`, "" when none was built) and how it stands: `accepted` /
 * `rejected` (the authority's MLS code in `statusCode`), `retry` (the next attempt in `nextAttemptOn`), `refused` (no
 * valid report could be made), `failed` (not delivered, or no acknowledgement in time). `report` numbers the invoice's
 * reports (`reportType` says which kind).
 */
const taxReport = detailsOf({
  id: str,
  role: z.enum(['C2', 'C3']),
  country: str,
  authority: str,
  reportType: z.enum(['submit', 'resubmit', 'disregard']),
  // Which report of the invoice ("1": the gateway's own; later ones are asked for through the API).
  report: str.optional(),
  reportDocumentId: str,
  invoiceUuid: str,
  outcome: z.enum(['accepted', 'rejected', 'retry', 'refused', 'failed']),
  statusCode: str,
  reason: str,
});

const orderResponseSent = detailsOf({
  id: str,
  recipient: str,
  endpoint: str,
  protocol: str,
  attempt: str,
  messageId: str,
  statusCode: z.enum(['AB', 'AP', 'RE', 'CA']),
  status: str,
});

const hookFailure = {
  /** The hook whose delivery failed. */
  hookId: str,
  /** Its target, without userinfo or query (see redactUrl). */
  url: str,
  /** Number of the failed attempt, 1-based. */
  attempt: str,
  /** HTTP status of the failed attempt; "" when there was no response (timeout, TLS, DNS, refused address). */
  httpStatus: str,
  /** Short cause: "HTTP 503", "timeout after 100 s", "TLS: certificate has expired", … */
  error: str,
  /** X-Service-Delivery / webhook-id of the failed delivery. */
  deliveryId: str,
  originalTopic: str,
  originalEventId: str,
};

/**
 * The `details` block per topic. Listed fields are always present (an empty string when unknown, so receivers see one
 * shape); producers may add more (spec 6.3: receivers ignore unknown fields). Topics without an entry take any string
 * map. The HookSent* and Ping blocks are ours: the spec leaves them open.
 */
export const EVENT_DETAILS_SCHEMAS = {
  InvoiceReceived: detailsOf({ id: str, sender: str, createdBy: str, documentTypeId: str }),
  InvoiceSent: invoiceSent,
  InvoiceSentRetry: invoiceSent,
  InvoiceSentError: invoiceSent,
  MessageLevelStatusReceived: detailsOf({
    statusCode: z.enum(['AP', 'RE', 'AB']),
    status: str,
    description: str,
    documentTypeId: str,
    profileId: str,
  }),
  MessageLevelStatusSent: detailsOf({
    statusCode: z.enum(['AP', 'RE', 'AB']),
    status: str,
    description: str,
    profileId: str,
    sourceDocumentTypeId: str,
    attempt: str,
    protocol: str,
  }),
  /** A buyer's Invoice Response; `refToDocumentId` is the sales invoice it answers ("" when none of ours). */
  InvoiceResponseReceived: detailsOf({
    id: str,
    sender: str,
    createdBy: str,
    documentTypeId: str,
    statusCode: z.enum(['AB', 'IP', 'UQ', 'CA', 'RE', 'AP', 'PD']),
    status: str,
    description: str,
    statusReasonCodes: str,
    statusReasons: str,
    statusActionCodes: str,
    responseId: str,
    invoiceId: str,
    invoiceIssueDate: str,
  }),
  /** The buyer's Invoice Response we sent (InvoiceSent's structure); `refToDocumentId` is the received invoice. */
  InvoiceResponseSent: invoiceResponseSent,
  InvoiceResponseSentRetry: invoiceResponseSent,
  InvoiceResponseSentError: invoiceResponseSent,
  OrderReceived: detailsOf({ id: str, sender: str, createdBy: str, documentTypeId: str, orderId: str }),
  /** A purchase order we sent; documentId is the uploaded order. */
  OrderSent: orderSent,
  OrderSentRetry: orderSent,
  OrderSentError: orderSent,
  /** The seller's Order Response we sent; `refToDocumentId` is the received order. */
  OrderResponseSent: orderResponseSent,
  OrderResponseSentRetry: orderResponseSent,
  OrderResponseSentError: orderResponseSent,
  /** `refToDocumentId` is the order of ours it answers ("" when none matches). */
  OrderResponseReceived: detailsOf({
    id: str,
    sender: str,
    createdBy: str,
    documentTypeId: str,
    statusCode: z.enum(['AB', 'AP', 'RE', 'CA']),
    status: str,
    orderId: str,
  }),
  /** An invoice response, order or order response that could not be read: stored, with the reason. */
  InvoiceResponseReceivedError: detailsOf({ id: str, sender: str, createdBy: str, documentTypeId: str, reason: str }),
  OrderReceivedError: detailsOf({ id: str, sender: str, createdBy: str, documentTypeId: str, reason: str }),
  OrderResponseReceivedError: detailsOf({ id: str, sender: str, createdBy: str, documentTypeId: str, reason: str }),
  /** A sent or received invoice's tax report (documentId: the invoice); `outcome` says how it ended or stands. */
  TaxReportSent: taxReport,
  TaxReportRetry: taxReport,
  TaxReportError: taxReport,
  /** A test event sent on request to one hook. */
  Ping: detailsOf({ hookId: str }),
  HookSentRetry: detailsOf({
    ...hookFailure,
    /** When the next attempt is planned, ISO 8601 UTC. */
    nextAttemptOn: str,
  }),
  HookSentError: detailsOf({
    ...hookFailure,
    /** `exhausted`: the 5-day window ended; `gone`: the receiver answered 410 and the hook was disabled. */
    reason: z.enum(['exhausted', 'gone']),
  }),
} as const satisfies Record<string, z.ZodType<Record<string, string>>>;

export type DetailsTopic = keyof typeof EVENT_DETAILS_SCHEMAS;
export type EventDetails<T extends DetailsTopic> = z.infer<(typeof EVENT_DETAILS_SCHEMAS)[T]>;

const anyDetails = z.record(z.string(), z.string());

function schemaFor(topic: string): z.ZodType<Record<string, string>> {
  return Object.prototype.hasOwnProperty.call(EVENT_DETAILS_SCHEMAS, topic)
    ? EVENT_DETAILS_SCHEMAS[topic as DetailsTopic]
    : anyDetails;
}

export type DetailsCheck = { ok: true; details: Record<string, string> } | { ok: false; errors: string[] };

/** Checks a producer's details block against its topic's schema. */
export function validateEventDetails(topic: string, details: unknown): DetailsCheck {
  const r = schemaFor(topic).safeParse(details);
  if (r.success) return { ok: true, details: r.data };
  return { ok: false, errors: r.error.issues.map((i) => `${i.path.map(String).join('.') || 'details'}: ${i.message}`) };
}

function orderedDetails(topic: string, details: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  const schema = schemaFor(topic);
  const known = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  // Schema fields first, in the table's order, then the rest as given: the same event always gives the same bytes.
  for (const key of known) if (typeof details[key] === 'string') out[key] = details[key];
  for (const [key, value] of Object.entries(details)) {
    if (typeof value === 'string' && !Object.prototype.hasOwnProperty.call(out, key)) out[key] = value;
  }
  return out;
}

function isoUtc(sentOn: Date | string): string {
  const d = typeof sentOn === 'string' ? new Date(sentOn) : sentOn;
  if (!(d instanceof Date) || Number.isNaN(d.getTime()))
    throw new RangeError(`sentOn is not a valid time: ${String(sentOn)}`);
  return d.toISOString();
}

/** The body for one attempt of one delivery: spec 6.3's fields, in that order, with this attempt's `sentOn`. */
export function buildEventPayload(event: GatewayEvent, hookId: string, sentOn: Date | string): EventPayload {
  return {
    topic: event.topic,
    partyId: event.partyId,
    hookId,
    ...(event.documentId ? { documentId: event.documentId } : {}),
    ...(event.refToDocumentId ? { refToDocumentId: event.refToDocumentId } : {}),
    message: event.message,
    details: orderedDetails(event.topic, event.details ?? {}),
    createdBy: event.createdBy,
    createdOn: event.createdOn,
    sentOn: isoUtc(sentOn),
  };
}

/** The exact bytes that are signed and sent. */
export function serializeEventPayload(payload: EventPayload): string {
  return JSON.stringify(payload);
}

/**
 * A hook URL fit for an event or a log line: userinfo dropped (httpsin URLs carry a password) and query values
 * replaced, since receivers often put tokens there. The path stays: it tells the customer which endpoint failed.
 */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '[invalid url]';
  }
  u.username = '';
  u.password = '';
  u.hash = '';
  const keys = [...u.searchParams.keys()];
  u.search = '';
  const query = keys.map((k) => `${encodeURIComponent(k)}=***`).join('&');
  return u.toString() + (query ? `?${query}` : '');
}

/** An event record as the payload builder and the delivery workflow's input carry it. */
export function toGatewayEvent(e: EventRecord): GatewayEvent {
  return {
    id: e.id,
    topic: e.topic,
    partyId: e.partyId,
    documentId: e.documentId,
    refToDocumentId: e.refToDocumentId,
    message: e.message,
    details: e.details,
    createdBy: e.createdBy,
    createdOn: e.createdOn.toISOString(),
  };
}
