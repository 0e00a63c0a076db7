import { GatewayError } from '../core/gateway-error';
import type { HookRepository } from '../storage/hooks/hook.repository';
import type { AttemptInput, AttemptResult, DeliveryAttempts } from './deliver-attempt';
import { deliveryEventToPublish, type DeliveryEventInput } from './delivery-events';
import type { HeldDeliveries, HoldDeliveryInput } from './held-deliveries';
import type { EventPublisher, PublishEventInput } from './publish';

/**
 * The webhook wing, one door: what the API's hook and events routes, the document use cases, the delivery activities
 * and the composition roots (src/main/webhooks.ts) use. Inside:
 * - publishing (publish.ts): route an event to hooks (filters, priority), store it once, start one delivery per hook;
 * - admission (admission.ts): a slot under the hook's cap, or the delivery throttled, held for a stuck hook
 *   (held-deliveries.ts: in the database, no run open, released by the hook's answers and a sweep) or overdue;
 * - dispatch (dispatch.ts): build the body, sign it, send it through the SSRF guard, write the delivery-log line; for
 *   an httpsin hook, put the event in the hook's inbox instead (inbox.ts: read and acknowledged through the API);
 * - the notices about a delivery (delivery-events.ts) and the one hook cache (hook-cache.ts).
 */

export { Admission, type AdmissionRefusal, type AttemptRun } from './admission';
export type { AttemptOffer } from '../../workflows/contracts/deliver-webhook';
export { HookConcurrency } from './concurrency';
export { DeliveryAttempts, type AttemptInput, type AttemptResult } from './deliver-attempt';
export { deliveryIdFor } from './delivery-id';
export { deliveryEventToPublish, type DeliveryEventInput, type DeliveryNoticeKind } from './delivery-events';
export { Dispatch, type DispatchResult } from './dispatch';
export { toGatewayEvent, type GatewayEvent } from './event-payload';
export { HeldDeliveries, type DeliveryRuns, type HoldDeliveryInput, type RestartDelivery } from './held-deliveries';
export { HookCache, type RoutingHookSource } from './hook-cache';
export { validateHookBody, type HookValidationOptions } from './hook-validation';
export { WebhookSender, type WebhookSenderOptions } from './http-sender';
export { redactHttpsinUrl } from './httpsin';
export { HttpsinInbox, entryEvent, inboxPath, INBOX_DEFAULT_LIMIT, INBOX_MAX_LIMIT, type InboxItem } from './inbox';
export {
  EventPublisher,
  type DeliveryMeta,
  type DeliveryStart,
  type DeliveryStarter,
  type PublishEventInput,
  type PublishResult,
} from './publish';
export {
  generateSecureKey,
  HookSecretVersions,
  parseOverlap,
  rotateHookSecret,
  type RotationResult,
} from './secret-rotation';
export { parseAllowList, type AllowList } from './ssrf-guard';
export { verifySignedDocument, verifyWebhook } from './verify-webhook';

/** What a publish from a workflow reports back. */
export interface PublishedEventSummary {
  eventId: string;
  label: string;
  deliveries: number;
}

export interface WebhookDeliveriesDeps {
  attempts: DeliveryAttempts;
  publisher: EventPublisher;
  hooks: HookRepository;
  /** Deliveries of stuck hooks held with no run open; without it a stuck hook's runs wait on their timers. */
  held?: HeldDeliveries;
}

/** The worker's side of the wing: each delivery activity is one call here. */
export class WebhookDeliveries {
  constructor(private readonly deps: WebhookDeliveriesDeps) {}

  /** The hooks (channel selection of the sending use case reads them as they are now). */
  get hooks(): HookRepository {
    return this.deps.hooks;
  }

  /** The publisher, for the document use cases that publish their own topics. */
  get publisher(): EventPublisher {
    return this.deps.publisher;
  }

  /** One delivery attempt; what the receiver did is the result, only the gateway's own failures throw. */
  attempt(input: AttemptInput, heartbeat: () => void): Promise<AttemptResult> {
    return this.deps.attempts.attempt(input, heartbeat);
  }

  /** Holds a delivery of a stuck hook (its run ends after this); throws while an earlier record is being released. */
  hold(input: HoldDeliveryInput): Promise<string> {
    if (!this.deps.held)
      throw new GatewayError('NOT_IMPLEMENTED', 'held deliveries are not wired in this worker', { retryable: false });
    return this.deps.held.hold(input);
  }

  /** The one publish path for producers running in workflows. */
  async publishEvent(input: PublishEventInput): Promise<PublishedEventSummary> {
    const { event, deliveries } = await this.deps.publisher.publishEvent(input);
    return {
      eventId: event.id,
      label: event.label,
      deliveries: deliveries.filter((d) => d.status === 'started' || d.status === 'running').length,
    };
  }

  /** HookSentRetry / HookSentError / an output rule's topic about one delivery. */
  publishDeliveryEvent(input: DeliveryEventInput): Promise<PublishedEventSummary> {
    return this.publishEvent(deliveryEventToPublish(input));
  }

  /** A receiver answered 410 Gone. True when this call switched the hook off. */
  disableHook(tenantId: string, hookId: string, reason: string): Promise<boolean> {
    return this.deps.hooks.disable(tenantId, hookId, reason);
  }
}
