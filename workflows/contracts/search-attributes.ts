import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

/*
 * The gateway's search attributes: what operators search runs by in the Temporal UI and with
 * `temporal workflow list --query` (docs/operations.md). Defined once here; registered on the local dev server by
 * scripts/lib/services.js, on the compose stack by docker-compose.temporal.yml, on any other cluster by the commands
 * in docs/operations.md. Processes refuse to start on a namespace that lacks one (src/main/search-attributes.ts).
 * SQL visibility allows 10 Keyword, 3 Int and 3 Datetime custom attributes per namespace: the gateway uses 9, 2, 1.
 */

/** The tenant of every run (documents, deliveries). */
export const TenantIdAttribute = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
/** The document a run is about (an MLS, an Invoice Response or an Order Response run: the document it answers). */
export const DocumentIdAttribute = defineSearchAttributeKey('DocumentId', SearchAttributeType.KEYWORD);
/** The party whose document it is (sendInvoice, deliveries: the event's party). */
export const PartyIdAttribute = defineSearchAttributeKey('PartyId', SearchAttributeType.KEYWORD);
/** What the run sends or received: one of DocumentKind. */
export const DocumentKindAttribute = defineSearchAttributeKey('DocumentKind', SearchAttributeType.KEYWORD);
/** The document's state as the run moves it (src/core/document-states.ts DocumentState). */
export const DocumentStateAttribute = defineSearchAttributeKey('DocumentState', SearchAttributeType.KEYWORD);
/**
 * How the run ended: the final topic it published (InvoiceSent, InvoiceSentError, OrderSent, …), or, where the run
 * ends without one, its own outcome (`dropped`, `refused`, `exhausted`, `skipped`). Set once the outcome is known.
 */
export const OutcomeAttribute = defineSearchAttributeKey('Outcome', SearchAttributeType.KEYWORD);
/** How the document goes: `peppol`, `email`, `https`, `drop` (the channel of sendInvoice's current attempt). */
export const ChannelAttribute = defineSearchAttributeKey('Channel', SearchAttributeType.KEYWORD);
/** The delivery attempt a sending run is at (1-based, counted over the run). */
export const AttemptAttribute = defineSearchAttributeKey('Attempt', SearchAttributeType.INT);
/** When a run waiting between attempts makes its next one (removed once it does). */
export const NextAttemptOnAttribute = defineSearchAttributeKey('NextAttemptOn', SearchAttributeType.DATETIME);

/** The attributes of document runs, in the order they are documented and registered. */
export const DOCUMENT_SEARCH_ATTRIBUTES = [
  TenantIdAttribute,
  DocumentIdAttribute,
  PartyIdAttribute,
  DocumentKindAttribute,
  DocumentStateAttribute,
  OutcomeAttribute,
  ChannelAttribute,
  AttemptAttribute,
  NextAttemptOnAttribute,
] as const;

/** Values of DocumentKind. */
export const DocumentKind = {
  Invoice: 'invoice',
  CreditNote: 'creditNote',
  InvoiceResponse: 'invoiceResponse',
  Order: 'order',
  OrderResponse: 'orderResponse',
  Mls: 'mls',
  TaxReport: 'taxReport',
} as const;

/** The DocumentKind of a detected business document type (`Invoice` → `invoice`, `OrderResponse` → `orderResponse`). */
export function documentKindValue(documentType: string): string {
  return documentType.charAt(0).toLowerCase() + documentType.slice(1);
}

/** The attributes a document run starts with: whatever its starter knows of them. */
export function startSearchAttributes(doc: {
  tenantId: string;
  documentId?: string;
  kind?: string;
  state?: string;
}): SearchAttributePair[] {
  return [
    { key: TenantIdAttribute, value: doc.tenantId },
    ...(doc.documentId !== undefined ? [{ key: DocumentIdAttribute, value: doc.documentId }] : []),
    ...(doc.kind !== undefined ? [{ key: DocumentKindAttribute, value: doc.kind }] : []),
    ...(doc.state !== undefined ? [{ key: DocumentStateAttribute, value: doc.state }] : []),
  ];
}
