import type { X509Certificate } from 'node:crypto';
import type { ApKeyRing } from '../peppol/pki/key-ring';
import type { RevocationChecker } from '../peppol/pki/revocation';
import type { RecipientLookup } from '../peppol/recipient-lookup';
import type { ParticipantId } from '../peppol/identifiers';
import type { CodeLists } from '../peppol/network-rules/code-lists';
import type { sendAs4Message } from '../peppol/as4/sender';
import type { DocumentStore } from '../documents/loader';
import type { DirectoryRepository } from '../storage/directory.repository';
import type { SentInstanceRepository } from '../storage/peppol/sent-instance.repository';
import type { SentReferenceRepository } from '../storage/peppol/sent-reference.repository';
import type { HookForRouting } from '../core/topics';
import type { HookRecord } from '../storage/hooks/hook.repository';
import type { GatewayEvent } from '../webhooks/event-payload';
import type { SmtpSender } from '../email';
import type { WebhookSender } from '../webhooks/http-sender';
import type { TransformRunner } from '../transform';
import type { ValidateOptions, ValidationResult } from '../validation';
import type { PublishEventInput, PublishResult } from '../webhooks/publish';
import type { ReportingItemSink } from '../reporting/peppol/items';

/** What a worker needs to send over Peppol: recipient lookups (SML → SMP) and our AP keys. */
export interface PeppolSender {
  /** `forget`: a delivery to the participant failed, so a kept answer about it is not used again. */
  lookup: Pick<RecipientLookup, 'findEndpoint'> & { forget?: (participant: ParticipantId) => void };
  keys: ApKeyRing;
  apCertificateAuthorities: readonly X509Certificate[];
  /** Checks the receipt signer's certificate for revocation (AS4_REVOCATION_CHECK); absent when switched off. */
  revocation?: RevocationChecker;
  /** One AS4 exchange; default 120 s. */
  sendTimeoutMs?: number;
  /** The AS4 exchange itself; sendAs4Message unless replaced (a test's peer). */
  exchange?: typeof sendAs4Message;
  /** The Peppol code lists sends are checked against; those of the process's rules cache unless given. */
  codeLists?: () => CodeLists;
  /** The clock removal dates are compared with; the system clock unless given (tests). */
  now?: () => Date;
}

/** A worker that cannot send over Peppol, and why (the settings it misses): each invoice ends saying so. */
export interface PeppolUnavailable {
  unavailable: string;
}

/** The e-mail channel of a worker: the relay and the From address (EMAIL_* / SMTP_* settings). */
export interface EmailChannel {
  smtp: SmtpSender;
  from: string;
}

/** A worker without an SMTP relay, and why: mail hooks end in a clear error. */
export interface EmailUnavailable {
  unavailable: string;
}

/** The https channel: the webhook sender (SSRF guard, keep-alive) and WEBHOOK_TIMEOUT_MS, a hook's timeout's cap. */
export interface HttpsChannel {
  sender: Pick<WebhookSender, 'send'>;
  maxTimeoutMs: number;
}

/** The official-rule validator (in process, or the document pool's threads with the same `validate`). */
export interface DocumentValidator {
  validate(input: Buffer, options?: ValidateOptions): Promise<ValidationResult>;
}

/** The one publish path of events (src/webhooks). */
export interface EventSink {
  publishEvent(input: PublishEventInput): Promise<PublishResult>;
}

/** Everything the send-invoice use case needs, all required: a worker cannot be wired without one of them. */
export interface SendInvoiceDeps extends DocumentStore {
  /** Parties: the sender check, and records written before uploads stamped the legal-entity id. */
  directory: Pick<DirectoryRepository, 'findParty' | 'listParties'>;
  validator: DocumentValidator;
  /** Conversions for a recipient: on the document pool's threads in the worker process, else in process. */
  transform: TransformRunner;
  peppolSender: PeppolSender | PeppolUnavailable;
  /** The e-mail channel (mail hooks). */
  email: EmailChannel | EmailUnavailable;
  /** The https channel (https hooks that take a sending topic). */
  https: HttpsChannel;
  /** The channel hooks of a document's party and environment as they are now, and one by id. */
  hooks: {
    listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]>;
    get(scope: { tenantId: string }, hookId: string): Promise<HookRecord | null>;
  };
  /** Hook filters (spec 6.8), the event path's evaluator. */
  passesFilter: (hook: HookForRouting, event: FilterEvent) => boolean;
  events: EventSink;
  /** Which document each SBDH InstanceIdentifier we send carries (a received MLS names it); absent in tests only. */
  sentInstances?: Pick<SentInstanceRepository, 'record'>;
  /** The numbers of the documents we send (a received Invoice Response names its invoice so); absent in tests only. */
  sentReferences?: Pick<SentReferenceRepository, 'record'>;
  /** Every settled AS4 exchange, for the Peppol network reports; absent in tests only. */
  reportingItems?: ReportingItemSink;
}

/** What a hook filter sees of an event. */
export type FilterEvent = Pick<GatewayEvent, 'topic' | 'partyId' | 'message' | 'createdBy' | 'createdOn' | 'details'> &
  Partial<Pick<GatewayEvent, 'documentId' | 'refToDocumentId'>>;
