/**
 * The Temporal contract of the deliverWebhook workflow: its name, input and result, its search-attribute keys, its
 * workflow id, and the shapes its activities exchange with it (what an attempt reports, the notices about a delivery,
 * a hold). Starters (src/main/webhooks.ts), the workflow and the webhook wing (src/webhooks, types only) import them
 * from here. The workflow has no signal and no query: a delivery waiting on a stuck hook is held in the database with
 * its run ended, and released by starting its next run under the same id (src/webhooks/held-deliveries.ts).
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import { DocumentIdAttribute, PartyIdAttribute, TenantIdAttribute } from './search-attributes';

export const DELIVER_WEBHOOK_WORKFLOW = 'deliverWebhook';

/**
 * Search attributes of delivery runs, for operators in the Temporal UI (`HookId = "…"`, `DeliveryAttempt > 3`). They
 * must be registered on the server (scripts/lib/services.js does it for the dev server); WEBHOOK_SEARCH_ATTRIBUTES
 * switches them off for a server that lacks them. TenantId, PartyId and DocumentId (the event's document) are the
 * gateway-wide ones (./search-attributes.ts).
 */
export const DELIVERY_SEARCH_ATTRIBUTES = {
  tenantId: TenantIdAttribute,
  hookId: defineSearchAttributeKey('HookId', 'KEYWORD'),
  topic: defineSearchAttributeKey('EventTopic', 'KEYWORD'),
  partyId: PartyIdAttribute,
  documentId: DocumentIdAttribute,
  attempt: defineSearchAttributeKey('DeliveryAttempt', 'INT'),
} as const;

/** One delivery = one event to one hook; its workflow id is derived from the delivery id (a business key). */
export function deliverWebhookWorkflowId(tenantId: string, deliveryId: string): string {
  return `webhook-delivery:${tenantId}:${deliveryId}`;
}

/** An event as stored once by publishEvent (spec 6.3 without the per-delivery hookId and sentOn). */
export interface GatewayEvent {
  readonly id: string;
  readonly topic: string;
  /** legalEntityId of the party, `<country>:<scheme>:<number>` (spec 2.3); "" for an environment-level event. */
  readonly partyId: string;
  readonly documentId?: string | null;
  /** Only on some topics (MLS): the original invoice or order. */
  readonly refToDocumentId?: string | null;
  readonly message: string;
  /** Topic-specific, all values strings (spec 6.3). */
  readonly details: Readonly<Record<string, string>>;
  /** Channel marker: peppol, email, network, manualUpload, ksef, … */
  readonly createdBy: string;
  /** ISO 8601 with offset; when the event happened. */
  readonly createdOn: string;
}

export interface DeliverWebhookInput {
  tenantId: string;
  eventId: string;
  hookId: string;
  /** deliveryIdFor(eventId, hookId): X-Service-Delivery and webhook-id of every attempt. */
  deliveryId: string;
  /** Backoff between failed attempts (data, so tests pass a tiny one). */
  schedule: RetrySchedule;
  /** Upper bound of one attempt's HTTP timeout (config); the activity's own timeout is derived from it. */
  maxAttemptTimeoutMs: number;
  /**
   * The search attributes above are set at the start (DeliveryAttempt = 1) and raised from the second attempt on;
   * false when the server does not have them registered.
   */
  searchAttributes?: boolean;
  /** Deliver even when the hook is inactive (a Ping is how a customer tests a hook before switching it on). */
  ignoreInactive?: boolean;
  /** Set when the run continued as new or a held delivery was released: where the previous run stopped. */
  resume?: DeliveryProgress;
  /** The event as published, so attempts and the notices about them read nothing (events never change). */
  event: GatewayEvent;
  /** The event's party key (null: environment level). */
  eventPartyKey: string | null;
  /** The hook's `rev` as routing saw it; lets the first attempt use a recently read copy of the hook. */
  hookRev?: number;
}

export interface DeliveryProgress {
  /** Attempts made so far (throttled tries are not attempts). */
  attempts: number;
  /** Workflow time (epoch ms) of the delivery's start: bounds the retry window. */
  startedAtMs: number;
  /** The last backoff wait, for decorrelated jitter. */
  previousDelayMs?: number;
  /** Consecutive tries refused by the per-hook concurrency cap. */
  throttled: number;
}

export type DeliveryOutcome =
  /** The receiver answered 2xx. */
  | 'delivered'
  /** An output rule matched the result; its topic was published instead of HookSentRetry/HookSentError. */
  | 'handed-off'
  /** The receiver answered 410: the hook was disabled and HookSentError published. */
  | 'gone'
  /** The schedule ran out (or the delivery waited for a slot longer than it may): HookSentError published. */
  | 'exhausted'
  /** Nothing was sent: the hook was deleted or switched off. */
  | 'skipped'
  /**
   * The hook is stuck (its receiver hangs): the delivery was written to the held deliveries with this run's progress
   * and the run ended; its next run starts when the hook answers, a timeout frees a slot for it, or it falls due.
   */
  | 'held';

export interface DeliverWebhookResult {
  outcome: DeliveryOutcome;
  attempts: number;
  /** HTTP status of the last attempt, when there was a response. */
  httpStatus?: number;
  /** Why a delivery was skipped, or the last error. */
  reason?: string;
  /** Topic an output rule published. */
  publishedTopic?: string;
}

/** What the run offers with each attempt: where it stands, and enough to hold the delivery on a stuck hook. */
export interface AttemptOffer {
  /** The run's input without the event (the attempt carries it) and without `resume`. */
  input: Omit<DeliverWebhookInput, 'event' | 'resume'>;
  /** The run's progress before this try. */
  progress: DeliveryProgress;
}

/** What one attempt activity reports back to the workflow (src/webhooks: admission, then dispatch). */
export type AttemptResult =
  /** Dispatched: the receiver answered. */
  | {
      kind: 'sent';
      /** 2xx. */
      ok: boolean;
      httpStatus: number;
      latencyMs: number;
      /** Retry-After of the response, in ms from now, when present and readable. */
      retryAfterMs?: number;
      /** Target of the attempt, redacted (no userinfo, no query values). */
      url: string;
      /** The expanded topic of the first output rule that matched this result. */
      outputTopic?: string;
    }
  /** Dispatched, no response: timeout, connection refused or reset, TLS, DNS, refused address. */
  | {
      kind: 'failed';
      error: string;
      timedOut: boolean;
      latencyMs: number;
      url: string;
      outputTopic?: string;
    }
  /** Nothing to send: the hook was deleted or switched off, or its action is not delivered. */
  | { kind: 'skipped'; reason: 'hook-deleted' | 'hook-inactive' | 'unsupported-action'; detail: string }
  /** Not admitted: no slot under the hook's cap (busy, not stuck): try again after `waitMs`. */
  | { kind: 'throttled'; waitMs: number }
  /** Not admitted: the hook is stuck; the delivery is held in the database (`seq`: its record); the run ends. */
  | { kind: 'held'; seq: string }
  /**
   * Not admitted: the hook is stuck and an earlier run's record of this delivery is still being released: the run
   * holds it in a step of its own (HoldDeliveryInput, due in `dueInMs`), which is tried until it can, then ends.
   */
  | { kind: 'hold'; dueInMs: number }
  /** Not admitted: the delivery has waited for a slot longer than it may: the run gives up (HookSentError). */
  | { kind: 'overdue' };

/** Input of the activity that holds a delivery of a stuck hook: the run's input and progress, and when it is due. */
export interface HoldDeliveryInput {
  /** The delivery's workflow id; its next run starts under the same id. */
  workflowId: string;
  /** The run that holds it: a release finding a later run under the id knows the delivery was taken over. */
  runId: string;
  input: DeliverWebhookInput;
  /** When the held delivery falls due if nothing releases it before. */
  dueInMs: number;
}

export type DeliveryNoticeKind =
  | { topic: 'HookSentRetry'; nextAttemptOn: string }
  | { topic: 'HookSentError'; reason: 'exhausted' | 'gone' }
  | { topic: 'output'; outputTopic: string };

/** Input of the activity that publishes HookSentRetry / HookSentError / an output rule's topic for a delivery. */
export interface DeliveryEventInput {
  /** Id of the event to publish; generated by the workflow so activity retries publish it once. */
  eventId: string;
  tenantId: string;
  /** The event whose delivery this is about. */
  originalEventId: string;
  hookId: string;
  deliveryId: string;
  attempt: number;
  httpStatus?: number;
  error: string;
  url: string;
  /** The event the delivery is about, as published, and its party key (null: environment level). */
  original: { event: GatewayEvent; partyKey: string | null };
  kind: DeliveryNoticeKind;
}

/**
 * The DeliveryEventInput for an attempt's outcome, shared by every workflow that delivers (the product's per-hook run
 * and the benchmark's fan-out), so the notice about a delivery is built one way, from the event the run carries.
 */
export function deliveryEventInput(
  run: { tenantId: string; eventId: string; event: GatewayEvent; eventPartyKey: string | null },
  delivery: { hookId: string; deliveryId: string; eventId: string; attempt: number },
  r: { kind: 'sent'; httpStatus: number; url: string } | { kind: 'failed'; error: string; url: string },
  kind: DeliveryNoticeKind,
): DeliveryEventInput {
  return {
    original: { event: run.event, partyKey: run.eventPartyKey },
    eventId: delivery.eventId,
    tenantId: run.tenantId,
    originalEventId: run.eventId,
    hookId: delivery.hookId,
    deliveryId: delivery.deliveryId,
    attempt: delivery.attempt,
    ...(r.kind === 'sent' ? { httpStatus: r.httpStatus } : {}),
    error: r.kind === 'sent' ? `HTTP ${r.httpStatus}` : r.error,
    url: r.url,
    kind,
  };
}
