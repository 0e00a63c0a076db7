import { parseRetryAfter } from '../core/retry-schedule';
import type { AttemptResult } from '../core/webhook-delivery';
import type { DeliveryLogRepository, EventRepository } from '../storage/events/event.repository';
import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import type { HookConcurrency } from './concurrency';
import type { ParkedDeliveries } from './parked-deliveries';
import type { RecentHooks } from './recent-hooks';
import {
  buildEventPayload,
  redactUrl,
  serializeEventPayload,
  toGatewayEvent,
  type GatewayEvent,
} from './event-payload';
import type { SendResult, WebhookSender } from './http-sender';
import { documentToken, httpsinTarget } from './httpsin';
import { selectOutputTopic } from './output-rules';
import { DELIVERABLE_ACTIONS } from './publish';
import { signDelivery } from './sign-payload';

/**
 * One attempt of one delivery: read the hook and the event as they are now (a URL or key fixed between attempts is
 * used at once), build the body with this attempt's `sentOn`, sign it, POST it, and write the delivery-log line.
 * Never throws for what the receiver does; only the gateway's own storage failing throws (and is retried).
 */

/** How long an attempt over the per-hook cap waits in the worker for a slot before handing back to its workflow. */
export const SLOT_WAIT_MS = 2_000;

/**
 * When a hook's slots are stuck and a throttled delivery cannot be parked (no registry, or a run without a workflow
 * id), it comes back after about as long as the hook has been stuck (at least 30 s, at most 10 min) rather than
 * polling: the deliveries waiting on it grow with time, their tries per second stay near the rate of new events for
 * that hook, so a hanging receiver does not load the engine more and more.
 */
export function stuckRetryMs(stuckForMs: number): number {
  return Math.min(10 * 60_000, Math.max(30_000, stuckForMs));
}

/**
 * A delivery parked on a stuck hook (ParkedDeliveries) is woken by the hook's first answer, and one parked delivery
 * tries the hook after each timeout, so its own timer is only the fallback for a wake that never comes (worker
 * restarted, the answer seen by another worker): at least 15 min (nine default timeouts; a failing delivery's own
 * retries are that far apart by its sixth attempt), up to an hour for a hook stuck that long. Each return costs an
 * activity and two workflow tasks, so the longer the timer the less a hung hook costs while it stays hung.
 */
export function parkedRetryMs(stuckForMs: number): number {
  return Math.min(60 * 60_000, Math.max(15 * 60_000, stuckForMs));
}

/**
 * A delivery-log line's key: one per (delivery, run, attempt), so a retried activity replaces its own line. The
 * delivery is part of it because a run is not bound to one delivery by the activity: a run that delivers one event
 * to several hooks (the fan-out the benchmark compares) would otherwise overwrite one hook's line with another's.
 */
export function logLineId(input: Pick<AttemptInput, 'deliveryId' | 'runKey' | 'attempt'>): string {
  return `${input.deliveryId}:${input.runKey}:${input.attempt}`;
}

export interface AttemptInput {
  tenantId: string;
  eventId: string;
  hookId: string;
  deliveryId: string;
  attempt: number;
  /** Unique per delivery run (the workflow run id): with `attempt` it keys the log line. */
  runKey: string;
  /** The delivery's workflow id: a throttled try on a stuck hook parks under it, to be woken when the hook answers. */
  workflowId?: string;
  ignoreInactive?: boolean;
  /** The event as published (events never change); without it (older runs) the attempt reads it. */
  event?: GatewayEvent;
  /** The hook's `rev` when the event was routed: a first attempt may use a recently read copy at least that new. */
  hookRev?: number;
}

export interface DeliveryAttemptsDeps {
  events: EventRepository;
  hooks: HookRepository;
  deliveryLog: DeliveryLogRepository;
  sender: WebhookSender;
  concurrency: HookConcurrency;
  /** Deliveries waiting on stuck hooks, woken by the hook's next answer; without it they wait on their timers. */
  parked?: ParkedDeliveries;
  /** Recently read hooks for first attempts (RecentHooks); without it every attempt reads the hook. */
  recentHooks?: RecentHooks;
  /** WEBHOOK_TIMEOUT_MS: the default and the cap of a hook's own timeout. */
  maxTimeoutMs: number;
  /** WEBHOOK_HTTPSIN_URL. */
  httpsinUrl?: string | undefined;
  now?: () => Date;
}

export class DeliveryAttempts {
  private readonly now: () => Date;

  constructor(private readonly deps: DeliveryAttemptsDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async attempt(input: AttemptInput, heartbeat: () => void = () => undefined): Promise<AttemptResult> {
    // The slot first: a hook at its cap costs no database reads, however often its deliveries come back to try.
    const release = await this.deps.concurrency.acquire(input.hookId, SLOT_WAIT_MS);
    if (!release) return this.throttled(input);
    if (input.workflowId) this.deps.parked?.unpark(input.hookId, input.workflowId);
    let result: AttemptResult | undefined;
    try {
      result = await this.attemptWithSlot(input, heartbeat);
      return result;
    } finally {
      release();
      if (result) this.afterAttempt(input.hookId, result);
    }
  }

  private async attemptWithSlot(input: AttemptInput, heartbeat: () => void): Promise<AttemptResult> {
    const hook = await this.readHook(input);
    if (!hook) return this.skip(input, 'hook-deleted', 'the hook was deleted');
    if (!hook.isActive && !input.ignoreInactive) return this.skip(input, 'hook-inactive', 'the hook is switched off');
    if (!DELIVERABLE_ACTIONS.has(hook.action))
      return this.skip(input, 'unsupported-action', `the hook's action is now ${hook.action}`);
    const stored = input.event ? undefined : await this.deps.events.get(input.tenantId, input.eventId);
    const event = input.event ?? (stored ? toGatewayEvent(stored) : undefined);
    if (!event) return this.skip(input, 'event-missing', 'the event no longer exists');
    return this.send(input, hook, event, heartbeat);
  }

  /**
   * What an attempt means for the deliveries parked on its hook (its slot already freed): any answer, even an error
   * status, means the receiver is back, and a hook deleted or switched off ends them all, so every parked run comes
   * back; a timeout hands the freed slot to the last one parked, so one of them is always finding out whether the
   * receiver is back, whether or not new events arrive.
   */
  private afterAttempt(hookId: string, r: AttemptResult): void {
    const parked = this.deps.parked;
    if (!parked?.waiting(hookId)) return;
    if (r.kind === 'sent' || (r.kind === 'skipped' && r.reason !== 'event-missing')) void parked.wake(hookId);
    else if (r.kind === 'failed' && r.timedOut) void parked.wakeOne(hookId);
  }

  /** No slot: try again soon, or, on a stuck hook, park until it answers (or a long timer, without a registry). */
  private throttled(input: AttemptInput): AttemptResult {
    const { concurrency, parked } = this.deps;
    if (!concurrency.isStuck(input.hookId)) return { kind: 'throttled' };
    const stuckFor = concurrency.stuckForMs(input.hookId);
    if (!parked || !input.workflowId) return { kind: 'throttled', retryInMs: stuckRetryMs(stuckFor) };
    parked.park(input.hookId, input.workflowId);
    return { kind: 'throttled', retryInMs: parkedRetryMs(stuckFor), parked: true };
  }

  /**
   * A first attempt may take the hook from RecentHooks (no older than what routing saw, read < 2 s ago); a retry
   * always reads it, so a URL or key fixed after a failure is used at once.
   */
  private readHook(input: AttemptInput): Promise<HookRecord | null> {
    const recent = this.deps.recentHooks;
    if (!recent) return this.deps.hooks.get({ tenantId: input.tenantId }, input.hookId);
    return recent.get(input.tenantId, input.hookId, input.attempt === 1 ? input.hookRev : undefined);
  }

  private async send(
    input: AttemptInput,
    hook: HookRecord,
    event: GatewayEvent,
    heartbeat: () => void,
  ): Promise<AttemptResult> {
    const sentOn = this.now();
    const shownUrl = redactUrl(hook.url ?? '');
    const secureKey = hook.secureKey;
    let result: SendResult;
    if (!secureKey || !hook.url) {
      result = { kind: 'error', error: 'the hook has no url or secureKey', timedOut: false, latencyMs: 0 };
    } else {
      const body = serializeEventPayload(buildEventPayload(event, hook.id, sentOn));
      const headers: Record<string, string> = signDelivery({
        body,
        secureKey,
        deliveryId: input.deliveryId,
        timestamp: sentOn,
      });
      const timeoutMs = Math.min(hook.timeoutMs ?? this.deps.maxTimeoutMs, this.deps.maxTimeoutMs);
      let url = hook.url;
      let trusted = false;
      let skipSend: SendResult | undefined;
      if (hook.action === 'httpsin') {
        if (!this.deps.httpsinUrl) {
          skipSend = {
            kind: 'error',
            error: 'the internal httpsin endpoint is not configured (WEBHOOK_HTTPSIN_URL)',
            timedOut: false,
            latencyMs: 0,
          };
        } else {
          const target = httpsinTarget(
            hook.url,
            this.deps.httpsinUrl,
            documentToken(secureKey, event.documentId ?? event.id),
          );
          url = target.url;
          headers['authorization'] = target.authorization;
          trusted = true;
        }
      }
      if (skipSend) result = skipSend;
      else {
        // Heartbeats let Temporal notice a crashed worker within seconds instead of after the activity timeout.
        const beat = setInterval(heartbeat, 5_000);
        try {
          result = await this.deps.sender.send({ url, headers, body, timeoutMs, trusted });
        } finally {
          clearInterval(beat);
        }
        // Timeouts narrow the hook's cap, answers widen it again (HookConcurrency); refusals and resets leave it.
        if (result.kind === 'response' || result.timedOut)
          this.deps.concurrency.recordOutcome(input.hookId, result.kind !== 'response');
      }
    }

    const outcomeForRules = result.kind === 'response' ? { httpStatus: result.status } : { timedOut: result.timedOut };
    const outputTopic = selectOutputTopic(hook.output, outcomeForRules, event.topic);
    const ok = result.kind === 'response' && result.status >= 200 && result.status < 300;
    await this.deps.deliveryLog.record({
      _id: logLineId(input),
      tenantId: input.tenantId,
      eventId: input.eventId,
      hookId: input.hookId,
      deliveryId: input.deliveryId,
      attempt: input.attempt,
      at: sentOn,
      httpStatus: result.kind === 'response' ? result.status : null,
      latencyMs: result.latencyMs,
      error: result.kind === 'response' ? (ok ? null : `HTTP ${result.status}`) : result.error,
      outcome: ok ? 'delivered' : 'failed',
      url: shownUrl,
    });

    if (result.kind === 'response') {
      const retryAfterMs = parseRetryAfter(result.retryAfter, sentOn.getTime() + result.latencyMs);
      return {
        kind: 'sent',
        ok,
        httpStatus: result.status,
        latencyMs: result.latencyMs,
        url: shownUrl,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        ...(outputTopic ? { outputTopic } : {}),
      };
    }
    return {
      kind: 'failed',
      error: result.error,
      timedOut: result.timedOut,
      latencyMs: result.latencyMs,
      url: shownUrl,
      ...(outputTopic ? { outputTopic } : {}),
    };
  }

  private async skip(
    input: AttemptInput,
    reason: Extract<AttemptResult, { kind: 'skipped' }>['reason'],
    detail: string,
  ): Promise<AttemptResult> {
    await this.deps.deliveryLog.record({
      _id: logLineId(input),
      tenantId: input.tenantId,
      eventId: input.eventId,
      hookId: input.hookId,
      deliveryId: input.deliveryId,
      attempt: input.attempt,
      at: this.now(),
      httpStatus: null,
      latencyMs: null,
      error: `not sent: ${detail}`,
      outcome: 'skipped',
      url: null,
    });
    return { kind: 'skipped', reason, detail };
  }
}
