import { Context, heartbeat } from '@temporalio/activity';
import { GatewayError } from '../src/core/gateway-error';
import {
  throttleBoundMs,
  throttleWaitMs,
  type AttemptHoldOffer,
  type AttemptResult,
  type DeliveryEventInput,
  type GatewayEvent,
  type HoldDeliveryInput,
} from '../src/core/webhook-delivery';
import type { EventRepository } from '../src/storage/events/event.repository';
import type { HookRepository } from '../src/storage/hooks/hook.repository';
import type { DeliveryAttempts } from '../src/webhooks/deliver-attempt';
import type { HeldDeliveries } from '../src/webhooks/held-deliveries';
import { toGatewayEvent } from '../src/webhooks/event-payload';
import type { EventPublisher, PublishEventInput } from '../src/webhooks/publish';

export interface WebhookServices {
  attempts: DeliveryAttempts;
  publisher: EventPublisher;
  hooks: HookRepository;
  events: EventRepository;
  /** Deliveries of stuck hooks held with no run open; without it a parked run waits on its timer. */
  held?: HeldDeliveries;
}

export interface WebhookActivityDeps {
  /** Optional so processes that run no webhook work can leave it out; the activities then fail with a clear error. */
  webhooks?: WebhookServices;
}

export interface AttemptDeliveryInput {
  tenantId: string;
  eventId: string;
  hookId: string;
  deliveryId: string;
  attempt: number;
  ignoreInactive?: boolean;
  event?: GatewayEvent;
  hookRev?: number;
  /** Runs that take a held delivery in the attempt's result offer its input here (older runs hold in a step of their own). */
  hold?: AttemptHoldOffer;
}

export interface PublishedEventSummary {
  eventId: string;
  label: string;
  deliveries: number;
}

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const services = (): WebhookServices => {
    if (!deps.webhooks) {
      throw new GatewayError(
        'NOT_IMPLEMENTED',
        'webhook activities are not wired in this worker (ActivityDeps.webhooks missing)',
        { retryable: false },
      );
    }
    return deps.webhooks;
  };

  /** The event the delivery is about: as the run carries it, or (older runs) read from storage. */
  async function originalOf(input: DeliveryEventInput): Promise<GatewayEvent & { partyKey: string | null }> {
    if (input.original) return { ...input.original.event, partyKey: input.original.partyKey };
    const stored = await services().events.get(input.tenantId, input.originalEventId);
    if (!stored) throw new GatewayError('NOT_FOUND', `event ${input.originalEventId} not found`, { retryable: false });
    return { ...toGatewayEvent(stored), partyKey: stored.partyKey };
  }

  const heldDeliveries = (): HeldDeliveries => {
    const { held } = services();
    if (!held)
      throw new GatewayError('NOT_IMPLEMENTED', 'held deliveries are not wired in this worker', { retryable: false });
    return held;
  };

  /**
   * Holds a delivery with the search attributes its next run gets (topic and party of its event). `wait`: throw while
   * an earlier run's record is still being released (the hold step is tried again); otherwise resolve undefined.
   */
  async function holdFor(input: HoldDeliveryInput, wait: boolean): Promise<string | undefined> {
    const d = input.input;
    const stored = d.event ? undefined : await services().events.get(d.tenantId, d.eventId);
    const meta = { topic: d.event?.topic ?? stored?.topic ?? '', partyKey: d.eventPartyKey ?? stored?.partyKey ?? '' };
    return wait ? heldDeliveries().hold(input, meta) : heldDeliveries().tryHold(input, meta);
  }

  async function publish(input: PublishEventInput): Promise<PublishedEventSummary> {
    const { event, deliveries } = await services().publisher.publishEvent(input);
    return {
      eventId: event.id,
      label: event.label,
      deliveries: deliveries.filter((d) => d.status === 'started' || d.status === 'running').length,
    };
  }

  return {
    /** One delivery attempt; what the receiver did is the result, only the gateway's own failures throw. */
    async attemptDelivery(input: AttemptDeliveryInput): Promise<AttemptResult> {
      const info = Context.current().info;
      // One log line per (run, attempt): a retried activity overwrites its own line.
      const runKey = info.workflowExecution?.runId ?? info.activityRunId ?? info.activityId;
      const workflowId = info.workflowExecution?.workflowId;
      const { hold, ...attemptInput } = input;
      const r = await services().attempts.attempt(
        { ...attemptInput, runKey, ...(workflowId ? { workflowId } : {}) },
        () => heartbeat(),
      );
      const runId = info.workflowExecution?.runId;
      if (r.kind !== 'throttled' || !r.parked || !hold || !workflowId || !runId || !services().held) return r;
      // Parked on a stuck hook: hold it here, so the run ends after this one activity (as a delivery sent does).
      const progress = { ...hold.progress, throttled: hold.progress.throttled + 1 };
      const dueInMs = throttleWaitMs(progress.throttled, r.retryInMs, Math.random());
      // Past the bound the run gives up instead (HookSentError): leave it to the run, holding nothing.
      if (Date.now() + dueInMs - progress.startedAtMs > throttleBoundMs(hold.input.schedule)) return r;
      const delivery = { ...hold.input, ...(input.event ? { event: input.event } : {}), resume: progress };
      // An earlier run's record still being released: the run's own hold step holds it (and is tried until it can).
      const heldSeq = await holdFor({ workflowId, runId, input: delivery, dueInMs }, false);
      return heldSeq === undefined ? r : { ...r, heldSeq };
    },

    /**
     * Holds a delivery of a stuck hook (its run ends after this): the run's input and progress go to the held
     * deliveries, with the search attributes its next run gets.
     */
    async holdDelivery(input: HoldDeliveryInput): Promise<string> {
      const seq = await holdFor(input, true);
      if (seq === undefined) throw new Error(`delivery ${input.workflowId} was not held`);
      return seq;
    },

    /** Takes a held delivery back for its run (woken while holding it); false when a release claimed it first. */
    async unholdDelivery(input: { workflowId: string; seq: string }): Promise<boolean> {
      // The run's own id makes its take-back claim its own: a retried activity finds it instead of losing to it.
      const info = Context.current().info;
      const runId = info.workflowExecution?.runId ?? info.activityId;
      return heldDeliveries().unhold(input.workflowId, input.seq, runId);
    },

    /** The one publish path for producers running in workflows (document topics of later work use it too). */
    async publishEvent(input: PublishEventInput): Promise<PublishedEventSummary> {
      return publish(input);
    },

    /** HookSentRetry / HookSentError / an output rule's topic about one delivery. */
    async publishDeliveryEvent(input: DeliveryEventInput): Promise<PublishedEventSummary> {
      const original = await originalOf(input);
      const party = original.partyKey ? { partyId: original.partyKey, legalEntityId: original.partyId } : null;
      const common = {
        id: input.eventId,
        tenantId: input.tenantId,
        party,
        documentId: original.documentId,
        refToDocumentId: original.refToDocumentId,
        createdBy: 'gateway',
      };
      const failure = {
        hookId: input.hookId,
        url: input.url,
        attempt: String(input.attempt),
        httpStatus: input.httpStatus === undefined ? '' : String(input.httpStatus),
        error: input.error,
        deliveryId: input.deliveryId,
        originalTopic: original.topic,
        originalEventId: original.id,
      };
      const cause = input.httpStatus !== undefined ? `HTTP ${input.httpStatus}` : input.error;
      switch (input.kind.topic) {
        case 'HookSentRetry':
          return publish({
            ...common,
            topic: 'HookSentRetry',
            message: `Delivery of ${original.topic} to hook ${input.hookId} failed (${cause}); attempt ${input.attempt + 1} follows at ${input.kind.nextAttemptOn}`,
            details: { ...failure, nextAttemptOn: input.kind.nextAttemptOn },
          });
        case 'HookSentError':
          return publish({
            ...common,
            topic: 'HookSentError',
            message:
              input.kind.reason === 'gone'
                ? `Hook ${input.hookId} answered 410 Gone to ${original.topic} and was switched off`
                : `Delivery of ${original.topic} to hook ${input.hookId} failed after ${input.attempt} attempts (${cause}); no more retries`,
            details: { ...failure, reason: input.kind.reason },
          });
        case 'output': {
          // The hook's output rule hands the original event on under a new topic; never back to the same hook.
          return publish({
            ...common,
            createdBy: original.createdBy,
            topic: input.kind.outputTopic,
            message: original.message,
            details: {
              ...original.details,
              originalTopic: original.topic,
              originalEventId: original.id,
              outputOfHookId: input.hookId,
              httpStatus: failure.httpStatus,
              error: input.error,
            },
            excludeHookIds: [input.hookId],
          });
        }
      }
    },

    /** A receiver answered 410 Gone. True when this call switched the hook off. */
    async disableHook(input: { tenantId: string; hookId: string; reason: string }): Promise<boolean> {
      return services().hooks.disable(input.tenantId, input.hookId, input.reason);
    },
  };
}
