import type { TaxReportingSettings } from './report-tax';
/**
 * The sendInvoice workflow's contract: its name, input and result, and what its activities take and answer. Shared
 * by the API (starter), the workflow and the use case (src/sending). Types only, besides the name.
 */
import type { Channel } from '../../src/core/channels';
import type { RetrySchedule } from '../../src/core/retry-schedule';

export const SEND_INVOICE_WORKFLOW = 'sendInvoice';

/** Signal: make the attempt a run is waiting for now (a document in `retrying`), instead of at its scheduled time. */
export const RETRY_NOW_SIGNAL = 'retryNow';

export interface SendInvoiceInput {
  tenantId: string;
  documentId: string;
  /**
   * Waits between failed Peppol delivery attempts, fixed when the run starts (PEPPOL_SEND_RETRY_SCHEDULE of the API
   * process). Absent (a starter without one): PEPPOL_SEND_SCHEDULE.
   */
  peppolSchedule?: RetrySchedule;
  /** Waits between e-mail attempts (EMAIL_SEND_RETRY_SCHEDULE of the API process); absent: EMAIL_SEND_SCHEDULE. */
  emailSchedule?: RetrySchedule;
  /** `?channel=` of the upload: a channel hook id or `peppol-fallback` (checked at upload). */
  channel?: string;
  /** A resend's generation (1, 2, …): its history entries and AS4 ids are its own. Absent: the upload's run. */
  generation?: number;
}

export interface DetectedFormatSummary {
  id: string;
  name: string;
  syntax: string;
  documentType: string;
  customizationId?: string;
  profileId?: string;
  /** Peppol document type identifier value, where the format has one. */
  documentTypeId?: string;
}

export type DetectionOutcome =
  { ok: true; format: DetectedFormatSummary } | { ok: false; code: string; message: string };

export type ValidationOutcome =
  | { kind: 'valid'; warnings: number; ruleSets: string[] }
  | { kind: 'invalid'; errors: number; reasonCodes: string[]; summary: string }
  | { kind: 'not-validated'; reason: string };

export interface PeppolIdentifier {
  scheme: string;
  value: string;
}

/** The invoice's Peppol addresses (BT-49 receiver, BT-34 sender, BT-40 country), or why it has none to send to. */
export type RoutingFacts =
  | { ok: true; sender: PeppolIdentifier; receiver: PeppolIdentifier; countryC1: string }
  | { ok: false; code: string; message: string };

/**
 * What the document check read once, carried by the workflow so later steps neither read the record again nor
 * re-parse the document: where its bytes are, whose it is, and (for formats with a Peppol document type) its routing.
 */
export interface DocumentFacts {
  /** The stored upload's bytes. */
  blobId: string;
  partyId: string;
  /** The party's legal-entity id, stamped on the record at upload. */
  legalEntityId: string | null;
  createdBy: string;
  /** A Factur-X / ZUGFeRD PDF: what goes over Peppol is its XML, converted. */
  pdf: boolean;
  /** The root element of the uploaded XML (detection read it), so building the SBD needs no parse. */
  root?: { namespaceURI: string; localName: string };
  /** Read for formats that have a Peppol document type identifier. */
  routing?: RoutingFacts;
}

/** The document check: detection, then (for a recognised format) validation, on one read of the stored bytes. */
export interface CheckDocumentResult {
  detection: DetectionOutcome;
  /** Absent when detection refused the document. */
  validation?: ValidationOutcome;
  facts: DocumentFacts;
  /** Set when this worker reports invoices to a tax authority: the run starts the document's reportTax run. */
  taxReporting?: TaxReportingSettings;
}

/** Which step of sendInvoice an InvoiceSent* event comes from. */
export type SendStage =
  | 'detection'
  | 'validation'
  | 'configuration'
  | 'sender'
  | 'recipient'
  | 'lookup'
  | 'delivery'
  | 'channel'
  | 'email'
  | 'https';

export type SendTopic = 'InvoiceSent' | 'InvoiceSentRetry' | 'InvoiceSentError';

/** One InvoiceSent* event with what is known at that point (spec 6.3 details); the record's state follows the topic. */
export interface SendEventInput {
  /** The run's generation (SendInvoiceInput.generation). */
  generation?: number;
  tenantId: string;
  documentId: string;
  topic: SendTopic;
  eventId: string;
  message: string;
  stage: SendStage;
  /** Who and what the event is about (from the document check: nothing is read again to publish). */
  facts: DocumentFacts;
  /** The uploaded format's Peppol document type, when it has one. */
  sourceDocumentTypeId?: string;
  reasonCode?: string;
  /** Buyer participant, `<icd>:<id>`. */
  recipient?: string;
  /** The receiving AS4 endpoint URL. */
  endpoint?: string;
  messageId?: string;
  attempt?: number;
  /** The Peppol document type the document went (or was to go) as. */
  targetDocumentTypeId?: string;
  /** How it went (or was to go): set once a channel made an attempt. */
  protocol?: 'peppol' | 'email' | 'https';
  /** InvoiceSentRetry: when the next attempt is due (ISO 8601). */
  nextAttemptOn?: string;
  /** The channel: its hook id, or `peppol` for the implicit Peppol channel. */
  channel?: string;
}

/** Where and how one sales invoice is delivered: the invoice's addresses and the recipient's checked SMP endpoint. */
export interface PeppolRoute {
  sender: PeppolIdentifier;
  receiver: PeppolIdentifier;
  countryC1: string;
  documentType: PeppolIdentifier;
  process: PeppolIdentifier;
  smpUrl: string;
  endpointUrl: string;
  /** The receiving AP certificate, base64 DER (encryption target; the receipt must be signed by its Seat ID). */
  receiverCertificate: string;
  /** SBDH MLS_TO: our own service provider id, where the receiving AP sends its MLS (absent on older routes). */
  mlsTo?: PeppolIdentifier;
  /** SBDH MLS_TYPE: the sending party's Peppol hook mlsType, else the environment's; absent: not written. */
  mlsType?: 'ALWAYS_SEND' | 'FAILURE_ONLY';
  /** Set when the recipient does not take the document's own format: what it is converted to before sending. */
  transform?: {
    /** Target format id (src/transform). */
    targetFormat: string;
    targetName: string;
    /** Elements the conversion could not carry over (unmapped + not carried); 0 for a lossless conversion. */
    notCarried: number;
    /** The converted bytes, stored once when the route was chosen. */
    blobId: string;
  };
}

export interface ResolveRecipientInput {
  tenantId: string;
  documentId: string;
  format: DetectedFormatSummary;
  facts: DocumentFacts;
}

export type ResolveRecipientOutcome =
  | { kind: 'found'; route: PeppolRoute }
  /** `retryable`: the SML or SMP could not be asked (not the recipient's answer); a later attempt may succeed. */
  | { kind: 'refused'; retryable: boolean; stage: SendStage; reasonCode: string; message: string; recipient?: string };

export interface SendPeppolInput {
  /** The run's generation (SendInvoiceInput.generation). */
  generation?: number;
  tenantId: string;
  documentId: string;
  facts: DocumentFacts;
  route: PeppolRoute;
  /** 1-based. */
  attempt: number;
  /** ISO time of the first attempt: every attempt is the same AS4 message (ids and timestamp), see message-ids.ts. */
  firstAttemptAt: string;
}

export interface SendPeppolOutcome {
  /** `duplicate`: the receiver already has this message (an earlier attempt's answer was lost). */
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  messageId: string;
  endpoint: string;
  httpStatus?: number;
  reason?: string;
  receiptMessageId?: string;
}

/**
 * The first Peppol attempt of a run in one step: the recipient resolved and, when found, the document sent to it.
 * Later attempts send along the route this answers (SendPeppolInput).
 */
export interface ResolveAndSendInput extends ResolveRecipientInput {
  /** The run's generation (SendInvoiceInput.generation). */
  generation?: number;
  /** 1-based. */
  attempt: number;
  /** ISO time of the first attempt (SendPeppolInput.firstAttemptAt). */
  firstAttemptAt: string;
}

/** The resolution, and the attempt's outcome when a route was found. */
export type ResolveAndSendOutcome =
  | { resolved: Extract<ResolveRecipientOutcome, { kind: 'refused' }> }
  | { resolved: Extract<ResolveRecipientOutcome, { kind: 'found' }>; sent: SendPeppolOutcome };

/** Choose the channel of one sending topic, and publish that topic's event (spec 6.2 `Send*`). */
export interface ChooseChannelInput {
  /** The run's generation (SendInvoiceInput.generation). */
  generation?: number;
  tenantId: string;
  documentId: string;
  /** The sending event's id (from the workflow: a retried activity publishes once). */
  eventId: string;
  topic: string;
  /** What `*` stands for in output topics: `Invoice` or `CreditNote`. */
  kind: string;
  facts: DocumentFacts;
  format: DetectedFormatSummary;
  /** The first sending topic of the run. */
  first: boolean;
  /** `?channel=` (first topic only). */
  forced?: string;
  /** Channels already tried (hook ids, `peppol` for the implicit one). */
  tried: string[];
  /** Why the previous channel gave the document on, for the event's message. */
  because?: string;
}

export type ChooseChannelOutcome =
  | { ok: true; channel: Channel; event: PublishedDocumentEvent }
  | { ok: false; reason: string; event: PublishedDocumentEvent };

/** One e-mail attempt of a document through a mail hook. */
export interface SendEmailInput {
  /** The run's generation (SendInvoiceInput.generation). */
  generation?: number;
  tenantId: string;
  documentId: string;
  facts: DocumentFacts;
  format: DetectedFormatSummary;
  hookId: string;
  /** 1-based, counted over the run (the history key). */
  attempt: number;
}

export interface SendEmailOutcome {
  /** `failed`: permanent (5xx, no address, the hook gone, no e-mail channel); `retryable`: 4xx, no answer. */
  outcome: 'delivered' | 'retryable' | 'failed';
  /** `mailto:` with the addresses it went (or was to go) to. */
  endpoint: string;
  /** The mail's Message-ID (stable per document and hook). */
  messageId: string;
  reason?: string;
  /** The relay's reply code. */
  smtpCode?: number;
  /** `failed` because nobody could be addressed: a 404 for output rules. */
  noRecipient?: boolean;
  /** `failed` because the uploader may not send as the invoice's seller: no other channel may take it either. */
  senderRefused?: boolean;
}

/** One attempt of a document through an `https` channel hook: the document POSTed, signed, to an external system. */
export interface SendHttpsInput {
  /** The run's generation (SendInvoiceInput.generation). */
  generation?: number;
  tenantId: string;
  documentId: string;
  facts: DocumentFacts;
  /** The sending topic the hook took (sent along as X-Service-Topic). */
  topic: string;
  hookId: string;
  /** 1-based, counted over the run (the history key). */
  attempt: number;
}

export interface SendHttpsOutcome {
  /** `failed`: permanent (4xx, the hook gone or unusable); `retryable`: 5xx, 408, 429, no answer. */
  outcome: 'delivered' | 'retryable' | 'failed';
  /** The hook's URL, credentials and query values redacted. */
  endpoint: string;
  /** The delivery id (X-Service-Delivery), the same on every attempt of this document to this hook. */
  messageId: string;
  httpStatus?: number;
  reason?: string;
  /** `failed` with nobody there: the receiver answered 404 or 410, or the hook is gone (404 for output rules). */
  notFound?: boolean;
  /** `failed` because the uploader may not send as the invoice's seller: no other channel may take it either. */
  senderRefused?: boolean;
}

export interface PublishedDocumentEvent {
  eventId: string;
  label: string;
}

export interface SendInvoiceResult {
  documentId: string;
  state: string;
  detection: DetectionOutcome;
  validation?: ValidationOutcome;
  /** The event that announced the final state (InvoiceSent or InvoiceSentError). */
  event?: PublishedDocumentEvent;
  /** Delivery: attempts made over all channels, and the last channel's message and endpoint. */
  delivery?: { attempts: number; messageId?: string; endpoint?: string; channel?: string; protocol?: string };
}
