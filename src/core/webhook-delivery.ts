/**
 * Names and shapes shared by whoever starts a webhook delivery (the API, the publish activity) and the delivery
 * workflow. Pure and dependency-free: workflows import src/core.
 */
import type { RetrySchedule } from './retry-schedule';

export const DELIVER_WEBHOOK_WORKFLOW = 'deliverWebhook';

/**
 * Search attributes of delivery workflows, for operators in the Temporal UI (`HookId = "…"`, `DeliveryAttempt > 3`).
 * They must be registered on the server (scripts/lib/services.js does it for the dev server); WEBHOOK_SEARCH_ATTRIBUTES
 * switches them off for a server that lacks them. TenantId is the gateway-wide one.
 */
export const DELIVERY_SEARCH_ATTRIBUTES = {
  tenantId: { name: 'TenantId', type: 'KEYWORD' },
  hookId: { name: 'HookId', type: 'KEYWORD' },
  topic: { name: 'EventTopic', type: 'KEYWORD' },
  partyId: { name: 'PartyId', type: 'KEYWORD' },
  attempt: { name: 'DeliveryAttempt', type: 'INT' },
} as const;

/**
 * Signal to a delivery parked on a stuck hook: the hook answered again, come back within `withinMs` (a random point in
 * it, so a long list of parked deliveries does not return all in the same second).
 */
export const HOOK_ANSWERED_SIGNAL = 'hookAnswered';
export interface HookAnswered {
  withinMs: number;
}

/** Tries refused by the per-hook concurrency cap wait this long at first, doubling up to the cap, with jitter. */
const THROTTLE_FIRST_WAIT_MS = 100;
const THROTTLE_MAX_WAIT_MS = 30_000;

/**
 * How long a throttled try waits (or a held delivery stays held) after its `throttled`-th refusal in a row: the stuck
 * hook's `retryInMs` when it gives one, else a short first wait doubling up to the cap; half of it plus a random half.
 */
export function throttleWaitMs(throttled: number, retryInMs: number | undefined, random: number): number {
  const top = Math.min(THROTTLE_MAX_WAIT_MS, THROTTLE_FIRST_WAIT_MS * 2 ** Math.min(throttled - 1, 20));
  const base = retryInMs !== undefined ? Math.max(retryInMs, top) : top;
  return Math.round(base / 2 + random * (base / 2));
}

/**
 * How long a delivery may wait for a free slot under the per-hook cap. Waiting there is back-pressure from the
 * gateway's own cap, not a failure of the receiver, so it is bounded only loosely: the retry window, and never less
 * than a day (a hook with a long backlog is slow, not broken).
 */
export function throttleBoundMs(schedule: RetrySchedule): number {
  const window =
    schedule.kind === 'exponential' ? schedule.totalWindowMs : schedule.delaysMs.reduce((a, b) => a + b, 0);
  return Math.max(window, 24 * 60 * 60 * 1000);
}

/**
 * Offered with each attempt: what the attempt needs to hold the delivery itself when it finds the hook stuck, so a
 * delivery to a hanging receiver costs one activity like any other instead of an attempt and a hold. The event is
 * not repeated (the attempt carries it).
 */
export interface AttemptHoldOffer {
  input: Omit<DeliverWebhookInput, 'event' | 'resume'>;
  /** The run's progress before this try. */
  progress: DeliveryProgress;
}

/** Input of the activity that holds a delivery of a stuck hook: the run's input with its progress, and when it is due. */
export interface HoldDeliveryInput {
  /** The delivery's workflow id; its next run starts under the same id. */
  workflowId: string;
  /** The run that holds it: a release finding a later run under the id knows the delivery was taken over. */
  runId: string;
  input: DeliverWebhookInput;
  /** When the held delivery falls due if nothing releases it before (the parked run's timer). */
  dueInMs: number;
}

/** One delivery = one event to one hook; its workflow id is derived from the delivery id (a business key). */
export function deliverWebhookWorkflowId(tenantId: string, deliveryId: string): string {
  return `webhook-delivery:${tenantId}:${deliveryId}`;
}

/** An event as stored once by publishEvent (spec 6.3 without the per-delivery hookId and sentOn); a payload is built from it per attempt. */
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
  /** Set (and update) the search attributes above; false when the server does not have them registered. */
  searchAttributes?: boolean;
  /** Deliver even when the hook is inactive (a Ping is how a customer tests a hook before switching it on). */
  ignoreInactive?: boolean;
  /** Set when the workflow continued as new: where the previous run stopped. */
  resume?: DeliveryProgress;
  /** The event as published, so attempts need not read it (events never change). Older runs have none. */
  event?: GatewayEvent;
  /** The event's party key (null: environment level), with `event`: the events about this delivery need no read. */
  eventPartyKey?: string | null;
  /** The start set the attempt search attribute to 1 already; the first attempt need not upsert it. */
  attemptOneAtStart?: boolean;
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
  /** The schedule ran out: HookSentError published. */
  | 'exhausted'
  /** Nothing was sent: the hook was deleted or switched off, or the event is gone. */
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

/** What one attempt activity reports back to the workflow. */
export type AttemptResult =
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
  | {
      kind: 'failed';
      /** No response: timeout, connection refused or reset, TLS, DNS, refused address. */
      error: string;
      timedOut: boolean;
      latencyMs: number;
      url: string;
      outputTopic?: string;
    }
  /**
   * The per-hook concurrency cap is reached in this worker: nothing was sent; try again. `retryInMs` when the hook's
   * slots are stuck (its receiver hangs): come back after that instead of polling. `parked`: the worker remembers the
   * delivery under its hook and releases it when the hook answers again: the run holds it (HoldDeliveryInput) and
   * ends, or, if a wake comes first, tries again (older runs wait for HOOK_ANSWERED_SIGNAL on a timer).
   */
  | {
      kind: 'throttled';
      retryInMs?: number;
      parked?: boolean;
      /** Parked, and held by the attempt itself (AttemptHoldOffer): the held record's seq; the run may end at once. */
      heldSeq?: string;
    }
  | {
      kind: 'skipped';
      reason: 'hook-deleted' | 'hook-inactive' | 'event-missing' | 'unsupported-action';
      detail: string;
    };

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
  /**
   * The event the delivery is about, as published, when the run carries it: publishing then reads nothing. Looking it
   * up by id is a scan of the events on FerretDB, which grows with every event stored and held up every other
   * delivery for a moment each time an attempt failed (decisions.md "Events about a delivery carry the original").
   */
  original?: { event: GatewayEvent; partyKey: string | null };
  kind:
    | { topic: 'HookSentRetry'; nextAttemptOn: string }
    | { topic: 'HookSentError'; reason: 'exhausted' | 'gone' }
    | { topic: 'output'; outputTopic: string };
}

/**
 * The DeliveryEventInput for an attempt's outcome, shared by every workflow that delivers (the product's per-hook run
 * and the benchmark's fan-out), so the notice about a delivery is built one way. `run`: what the run carries; the
 * original event goes along only when the run has it with its party key (runs started before that read it instead).
 */
export function deliveryEventInput(
  run: {
    tenantId: string;
    eventId: string;
    event?: GatewayEvent | undefined;
    eventPartyKey?: string | null | undefined;
  },
  delivery: { hookId: string; deliveryId: string; eventId: string; attempt: number },
  r: { kind: 'sent'; httpStatus: number; url: string } | { kind: 'failed'; error: string; url: string },
  kind: DeliveryEventInput['kind'],
): DeliveryEventInput {
  return {
    ...(run.event && run.eventPartyKey !== undefined
      ? { original: { event: run.event, partyKey: run.eventPartyKey } }
      : {}),
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
