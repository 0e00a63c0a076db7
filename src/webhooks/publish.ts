import { randomUUID } from 'node:crypto';
import { CHANNEL_ACTIONS, isSendTopic } from '../core/channels';
import { GatewayError } from '../core/gateway-error';
import { selectHooks, validateTopicPattern, type RoutingLabel } from '../core/topics';
import type { RetrySchedule } from '../core/retry-schedule';
import type { DeliverWebhookInput } from '../../workflows/contracts/deliver-webhook';
import type {
  DeliveryLogRepository,
  EventRecord,
  EventRepository,
  EventRouteDoc,
} from '../storage/events/event.repository';
import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import { deliveryIdFor } from './delivery-id';
import { toGatewayEvent, validateEventDetails } from './event-payload';
import { createFilterPredicate } from './filter';
import type { RoutingHookSource } from './hook-cache';

/**
 * publishEvent: the one path every producer takes (Ping, HookSentRetry, HookSentError, output-rule topics, and the
 * document topics of later work). It persists the event with its routing (label and selected hooks) in one write,
 * then starts one delivery workflow per selected hook that has an HTTP channel. The event is durable before any
 * delivery starts; a retried publish with the same id finds the stored event and (re)starts its deliveries, which is
 * idempotent because delivery workflow ids derive from (event, hook).
 */

/** Starts delivery workflows: Temporal in the processes, a recorder in HTTP tests. */
export interface DeliveryStarter {
  /**
   * `fresh`: the first delivery of (event, hook): a second start for the same pair is a no-op ('already-started').
   * `redeliver`: a new run after earlier ones closed; 'running' when one is still in progress.
   */
  startDelivery(
    input: DeliverWebhookInput,
    meta: DeliveryMeta,
    mode: 'fresh' | 'redeliver',
    options?: { startDelayMs?: number },
  ): Promise<'started' | 'already-started' | 'running'>;
}

/** What operators search deliveries by (Temporal search attributes). */
export interface DeliveryMeta {
  topic: string;
  /** Path form, or "" for an environment-level event. */
  partyKey: string;
}

export interface PublishEventInput {
  /** Given by producers that may retry (workflows): the same id publishes once. Default: a new UUID. */
  id?: string;
  tenantId: string;
  topic: string;
  /** The event's party in both forms, or null/absent for an environment-level event. */
  party?: { partyId: string; legalEntityId: string } | null;
  documentId?: string | null;
  refToDocumentId?: string | null;
  message: string;
  details?: Record<string, string>;
  createdBy: string;
  createdOn?: Date;
  /** Deliver to this hook only, whatever its topics (Ping). */
  targetHookId?: string;
  /** Hooks that must not receive the event. */
  excludeHookIds?: readonly string[];
}

/** What the caller already holds, so publishing need not read it again. */
export interface PublishOptions {
  /** The hook of `targetHookId` as the caller just read it within the event's tenant (the Ping endpoint). */
  targetHook?: HookRecord;
}

export interface DeliveryStart {
  hookId: string;
  action: string;
  deliveryId: string;
  status: EventRouteDoc['status'] | 'running';
}

export interface PublishResult {
  event: EventRecord;
  deliveries: DeliveryStart[];
}

export interface PublisherSettings {
  schedule: RetrySchedule;
  maxAttemptTimeoutMs: number;
}

export interface EventPublisherDeps {
  events: EventRepository;
  hooks: HookRepository;
  deliveryLog: DeliveryLogRepository;
  starter: DeliveryStarter;
  settings: PublisherSettings;
  /** Where routing gets its candidate hooks (HookCache: recently read lists); default: the repository. */
  routing?: RoutingHookSource;
  now?: () => Date;
}

/** Channels the gateway delivers itself in this version; the others are recorded as `unsupported`, never lost. */
export const DELIVERABLE_ACTIONS: ReadonlySet<string> = new Set(['https', 'httpsin']);

const UNSUPPORTED_MESSAGE: Record<string, string> = {
  mailto: 'e-mail delivery of events is not implemented in this version',
  peppol: 'Peppol delivery of events is not implemented in this version',
};

/**
 * What routing does with a selected hook: `started` (an HTTP delivery), `dropped`, `channel` (a channel hook on a
 * sending topic: the sendInvoice workflow acts on it, src/core/channels.ts), or `unsupported` (recorded, never lost).
 */
function routeStatus(topic: string, action: string): EventRouteDoc['status'] {
  if (action === 'drop') return 'dropped';
  if (DELIVERABLE_ACTIONS.has(action)) return 'started';
  return isSendTopic(topic) && CHANNEL_ACTIONS.has(action) ? 'channel' : 'unsupported';
}

function checkEvent(input: PublishEventInput): Record<string, string> {
  const topicProblem = validateTopicPattern(input.topic);
  if (topicProblem || input.topic.includes('*')) {
    throw new GatewayError(
      'BAD_REQUEST',
      `cannot publish topic "${input.topic}": ${topicProblem ?? 'a topic has no wildcard'}`,
      { retryable: false },
    );
  }
  const details = input.details ?? {};
  for (const key of Object.keys(details)) {
    // Storage rule (FerretDB and MongoDB): keys may not contain "." or start with "$".
    if (key.includes('.') || key.startsWith('$') || key.length === 0) {
      throw new GatewayError('BAD_REQUEST', `details key "${key}" is not allowed`, { retryable: false });
    }
  }
  const check = validateEventDetails(input.topic, details);
  if (!check.ok)
    throw new GatewayError('BAD_REQUEST', `details of ${input.topic} are invalid: ${check.errors.join('; ')}`, {
      retryable: false,
    });
  return check.details;
}

function revOf(hooks: readonly HookRecord[], hookId: string): { hookRev?: number } {
  const hook = hooks.find((h) => h.id === hookId);
  return hook ? { hookRev: hook.rev } : {};
}

export class EventPublisher {
  private readonly passesFilter = createFilterPredicate();
  private readonly now: () => Date;

  constructor(private readonly deps: EventPublisherDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * A Ping to one hook, signed like every delivery (the API's ping and the admin CLI's): `owner` is the hook's party,
   * when it has one.
   */
  ping(
    hook: HookRecord,
    owner: { partyId: string; legalEntityId: string } | null,
    createdBy: string,
  ): Promise<PublishResult> {
    return this.publishEvent(
      {
        tenantId: hook.tenantId,
        topic: 'Ping',
        party: owner ? { partyId: owner.partyId, legalEntityId: owner.legalEntityId } : null,
        message: `Ping for hook ${hook.id}`,
        details: { hookId: hook.id },
        createdBy,
        targetHookId: hook.id,
      },
      { targetHook: hook },
    );
  }

  async publishEvent(input: PublishEventInput, options: PublishOptions = {}): Promise<PublishResult> {
    const details = checkEvent(input);
    const draft: EventRecord = {
      id: input.id ?? randomUUID(),
      tenantId: input.tenantId,
      topic: input.topic,
      partyId: input.party?.legalEntityId ?? '',
      partyKey: input.party?.partyId ?? null,
      documentId: input.documentId ?? null,
      refToDocumentId: input.refToDocumentId ?? null,
      message: input.message,
      details,
      createdBy: input.createdBy,
      createdOn: input.createdOn ?? this.now(),
      label: 'dead-letter',
      routes: [],
      targetHookId: input.targetHookId ?? null,
      excludeHookIds: [...(input.excludeHookIds ?? [])],
    };
    const { label, routes, hooks } = await this.route(draft, options.targetHook);
    const event: EventRecord = { ...draft, label, routes };
    if ((await this.deps.events.insert(event)) === 'exists') {
      // A retried publish: deliver what the first call routed, not a second routing (hooks may have changed since).
      const stored = await this.deps.events.get(input.tenantId, event.id);
      if (!stored) throw new GatewayError('STORAGE_FAILED', `event ${event.id} exists but cannot be read`);
      return { event: stored, deliveries: await this.startRoutes(stored, stored.routes, 'fresh') };
    }
    await this.logUnsupported(event, hooks);
    return { event, deliveries: await this.startRoutes(event, routes, 'fresh', hooks) };
  }

  /**
   * A fresh delivery of a stored event (decisions.md "Delivery log"). With a hook: to that hook (it must be one the
   * gateway delivers to). Without: the event is routed again against the current hooks, so a dead-letter event reaches
   * a hook registered after it, and the new routing is recorded.
   */
  async redeliver(tenantId: string, eventId: string, hookId?: string): Promise<PublishResult> {
    const event = await this.deps.events.get(tenantId, eventId);
    if (!event) throw new GatewayError('NOT_FOUND', `Event ${eventId} not found`);
    if (hookId !== undefined) {
      const hook = await this.deps.hooks.get({ tenantId }, hookId);
      if (!hook) throw new GatewayError('NOT_FOUND', `Hook ${hookId} not found`);
      if (!DELIVERABLE_ACTIONS.has(hook.action)) {
        throw new GatewayError(
          'CONFLICT',
          `Hook ${hookId} has action ${hook.action}; only https and httpsin hooks can be redelivered to`,
        );
      }
      const route: EventRouteDoc = {
        hookId,
        action: hook.action,
        deliveryId: deliveryIdFor(event.id, hookId),
        status: 'started',
      };
      // Built on the routing as recorded when it is written: a redelivery to another hook meanwhile keeps its route.
      const recorded = await this.deps.events.updateRouting(eventId, (current) => ({
        label: 'routed',
        routes: [...current.routes.filter((r) => r.hookId !== hookId), route],
      }));
      const routes = recorded?.routes ?? [...event.routes.filter((r) => r.hookId !== hookId), route];
      const updated = { ...event, label: 'routed' as const, routes };
      return { event: updated, deliveries: await this.startRoutes(updated, [route], 'redeliver', [hook]) };
    }
    const { label, routes, hooks } = await this.route(event);
    await this.deps.events.setRouting(eventId, label, routes);
    const updated = { ...event, label, routes };
    await this.logUnsupported(updated, hooks);
    return { event: updated, deliveries: await this.startRoutes(updated, routes, 'redeliver', hooks) };
  }

  private async route(
    event: EventRecord,
    known?: HookRecord,
  ): Promise<{ label: RoutingLabel; routes: EventRouteDoc[]; hooks: HookRecord[] }> {
    let selected: HookRecord[];
    let label: RoutingLabel;
    if (event.targetHookId) {
      const given = known && known.id === event.targetHookId && known.tenantId === event.tenantId ? known : undefined;
      const hook = given ?? (await this.deps.hooks.get({ tenantId: event.tenantId }, event.targetHookId));
      selected = hook ? [hook] : [];
      label = selected.length === 0 ? 'dead-letter' : selected.every((h) => h.action === 'drop') ? 'dropped' : 'routed';
    } else {
      const excluded = new Set(event.excludeHookIds);
      const candidates = (
        await (this.deps.routing ?? this.deps.hooks).listForRouting(event.tenantId, event.partyKey)
      ).filter((h) => !excluded.has(h.id));
      // Filters see the payload's view of the event: createdOn as the ISO text receivers get.
      const routable = { ...event, createdOn: event.createdOn.toISOString() };
      const selection = selectHooks(routable, candidates, { passesFilter: this.passesFilter });
      selected = selection.selected;
      label = selection.label;
    }
    const routes: EventRouteDoc[] = selected.map((h) => ({
      hookId: h.id,
      action: h.action,
      deliveryId: deliveryIdFor(event.id, h.id),
      status: routeStatus(event.topic, h.action),
    }));
    return { label, routes, hooks: selected };
  }

  /** `routed`: the hooks as routing read them; their `rev` goes with each start (a retried publish has none). */
  private async startRoutes(
    event: EventRecord,
    routes: readonly EventRouteDoc[],
    mode: 'fresh' | 'redeliver',
    routed: readonly HookRecord[] = [],
  ): Promise<DeliveryStart[]> {
    return Promise.all(
      routes.map(async (r): Promise<DeliveryStart> => {
        if (r.status !== 'started') return { ...r };
        const input: DeliverWebhookInput = {
          tenantId: event.tenantId,
          eventId: event.id,
          hookId: r.hookId,
          deliveryId: r.deliveryId,
          schedule: this.deps.settings.schedule,
          maxAttemptTimeoutMs: this.deps.settings.maxAttemptTimeoutMs,
          event: toGatewayEvent(event),
          eventPartyKey: event.partyKey,
          ...revOf(routed, r.hookId),
          ...(event.targetHookId === r.hookId && event.topic === 'Ping' ? { ignoreInactive: true } : {}),
        };
        const result = await this.deps.starter.startDelivery(
          input,
          { topic: event.topic, partyKey: event.partyKey ?? '' },
          mode,
        );
        return { ...r, status: result === 'running' ? 'running' : 'started' };
      }),
    );
  }

  /** A channel without an implementation leaves a line in the delivery log, so the event is not silently lost. */
  private async logUnsupported(event: EventRecord, hooks: readonly HookRecord[]): Promise<void> {
    for (const hook of hooks) {
      if (routeStatus(event.topic, hook.action) !== 'unsupported') continue;
      const deliveryId = deliveryIdFor(event.id, hook.id);
      await this.deps.deliveryLog.record({
        _id: `${deliveryId}:unsupported`,
        tenantId: event.tenantId,
        eventId: event.id,
        hookId: hook.id,
        deliveryId,
        attempt: 0,
        at: this.now(),
        httpStatus: null,
        latencyMs: null,
        error: UNSUPPORTED_MESSAGE[hook.action] ?? `action ${hook.action} has no delivery implementation`,
        outcome: 'unsupported',
        url: null,
      });
    }
  }
}
