import type { AttemptResult } from '../../workflows/contracts/deliver-webhook';
import { parseRetryAfter } from '../core/retry-schedule';
import type { DeliveryLogRepository } from '../storage/events/event.repository';
import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import { buildEventPayload, redactUrl, serializeEventPayload, type GatewayEvent } from './event-payload';
import type { HookCache } from './hook-cache';
import type { SendResult, WebhookSender } from './http-sender';
import type { HttpsinInbox } from './inbox';
import type { HookSecretVersions } from './secret-rotation';
import { selectOutputTopic } from '../core/output-rules';
import { DELIVERABLE_ACTIONS } from './publish';
import { signDelivery } from './sign-payload';

/**
 * Dispatch: one admitted attempt of one delivery (admission.ts gave it a slot). Read the hook as it is now (a URL or
 * key fixed between attempts is used at once), build the body from the event with this attempt's `sentOn`, sign it,
 * POST it through the SSRF guard, and write the delivery-log line. An httpsin hook's attempt puts the event in the
 * hook's inbox in the gateway's own database instead (inbox.ts: one keyed insert). Never throws for what the receiver
 * does; only the gateway's own storage failing throws (and is retried).
 */

/** What one dispatched attempt did. */
export type DispatchResult = Extract<AttemptResult, { kind: 'sent' | 'failed' | 'skipped' }>;

export interface DispatchInput {
  tenantId: string;
  eventId: string;
  hookId: string;
  deliveryId: string;
  attempt: number;
  /** Unique per delivery run (the workflow run id): with `attempt` it keys the log line. */
  runKey: string;
  ignoreInactive?: boolean;
  /** The event as published (events never change). */
  event: GatewayEvent;
  /** The hook's `rev` when the event was routed: a first attempt may use a recently read copy at least that new. */
  hookRev?: number;
}

/**
 * A delivery-log line's key: one per (delivery, run, attempt), so a retried activity replaces its own line. The
 * delivery is part of it because a run is not bound to one delivery by the activity: a run that delivers one event
 * to several hooks (the fan-out the benchmark compares) would otherwise overwrite one hook's line with another's.
 */
export function logLineId(input: Pick<DispatchInput, 'deliveryId' | 'runKey' | 'attempt'>): string {
  return `${input.deliveryId}:${input.runKey}:${input.attempt}`;
}

/** What identifies an attempt's line in the delivery log. */
function logLineKeys(input: DispatchInput) {
  return {
    _id: logLineId(input),
    tenantId: input.tenantId,
    eventId: input.eventId,
    hookId: input.hookId,
    deliveryId: input.deliveryId,
    attempt: input.attempt,
  };
}

export interface DispatchDeps {
  hooks: HookRepository;
  deliveryLog: DeliveryLogRepository;
  sender: WebhookSender;
  /** Recently read hooks for first attempts; without it every attempt reads the hook. */
  hookCache?: HookCache;
  /** WEBHOOK_TIMEOUT_MS: the default and the cap of a hook's own timeout. */
  maxTimeoutMs: number;
  /** The inboxes of httpsin hooks; without it an httpsin delivery fails (and is retried) as unwired. */
  inbox?: HttpsinInbox | undefined;
  /** Rotated secrets: inside a rotation's overlap both keys sign. Without it only the hook's key signs. */
  secretVersions?: HookSecretVersions | undefined;
  now?: () => Date;
}

export class Dispatch {
  private readonly now: () => Date;

  constructor(private readonly deps: DispatchDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * The attempt; `reached` hears whether the receiver answered (false) or timed out (true), before the log line is
   * written, so admission can narrow or widen the hook's cap while the slot is still taken.
   */
  async dispatch(
    input: DispatchInput,
    heartbeat: () => void = () => undefined,
    reached: (timedOut: boolean) => void = () => undefined,
  ): Promise<DispatchResult> {
    const hook = await this.readHook(input);
    if (!hook) return this.skip(input, 'hook-deleted', 'the hook was deleted');
    if (!hook.isActive && !input.ignoreInactive) return this.skip(input, 'hook-inactive', 'the hook is switched off');
    if (!DELIVERABLE_ACTIONS.has(hook.action))
      return this.skip(input, 'unsupported-action', `the hook's action is now ${hook.action}`);
    if (hook.action === 'httpsin') return this.putInInbox(input, hook);
    return this.send(input, hook, input.event, heartbeat, reached);
  }

  /**
   * An httpsin attempt: the event goes into the hook's inbox with one keyed insert; a repeat (a retried activity, a
   * redelivery) finds its entry there, acknowledged or not, and adds nothing. Logged like any attempt, without a status.
   */
  private async putInInbox(input: DispatchInput, hook: HookRecord): Promise<DispatchResult> {
    const at = this.now();
    const shownUrl = redactUrl(hook.url ?? '');
    const inbox = this.deps.inbox;
    const put = inbox
      ? await inbox.put({ tenantId: input.tenantId, hookId: hook.id, deliveryId: input.deliveryId, event: input.event })
      : undefined;
    const latencyMs = this.now().getTime() - at.getTime();
    await this.deps.deliveryLog.record({
      ...logLineKeys(input),
      at,
      httpStatus: null,
      latencyMs,
      error: put ? null : 'the inbox of httpsin hooks is not wired in this worker',
      outcome: put ? 'delivered' : 'failed',
      url: shownUrl,
    });
    if (!put) return { kind: 'failed', error: 'inbox not wired', timedOut: false, latencyMs, url: shownUrl };
    // 201: a new entry; 200: the entry was in the inbox already.
    return { kind: 'sent', ok: true, httpStatus: put === 'inserted' ? 201 : 200, latencyMs, url: shownUrl };
  }

  /**
   * A first attempt may take the hook from the hook cache (no older than what routing saw, read < 2 s ago); a retry
   * always reads it, so a URL or key fixed after a failure is used at once.
   */
  private readHook(input: DispatchInput): Promise<HookRecord | null> {
    const cache = this.deps.hookCache;
    if (!cache) return this.deps.hooks.get({ tenantId: input.tenantId }, input.hookId);
    return cache.get(input.tenantId, input.hookId, input.attempt === 1 ? input.hookRev : undefined);
  }

  private async send(
    input: DispatchInput,
    hook: HookRecord,
    event: GatewayEvent,
    heartbeat: () => void,
    reached: (timedOut: boolean) => void,
  ): Promise<DispatchResult> {
    const sentOn = this.now();
    const shownUrl = redactUrl(hook.url ?? '');
    const secureKey = hook.secureKey;
    let result: SendResult;
    if (!secureKey || !hook.url) {
      result = { kind: 'error', error: 'the hook has no url or secureKey', timedOut: false, latencyMs: 0 };
    } else {
      const body = serializeEventPayload(buildEventPayload(event, hook.id, sentOn));
      const previousSecureKey = (await this.deps.secretVersions?.previousKey(hook, sentOn)) ?? null;
      const headers: Record<string, string> = signDelivery({
        body,
        secureKey,
        deliveryId: input.deliveryId,
        timestamp: sentOn,
        previousSecureKey,
      });
      const timeoutMs = Math.min(hook.timeoutMs ?? this.deps.maxTimeoutMs, this.deps.maxTimeoutMs);
      // Heartbeats let Temporal notice a crashed worker within seconds instead of after the activity timeout.
      const beat = setInterval(heartbeat, 5_000);
      try {
        result = await this.deps.sender.send({ url: hook.url, headers, body, timeoutMs, auth: hook.deliveryAuth });
      } finally {
        clearInterval(beat);
      }
      // Admission hears whether the receiver answered or timed out before the slot is given back.
      if (result.kind === 'response' || result.timedOut) reached(result.kind !== 'response');
    }

    const outcomeForRules = result.kind === 'response' ? { httpStatus: result.status } : { timedOut: result.timedOut };
    const outputTopic = selectOutputTopic(hook.output, outcomeForRules, event.topic);
    const ok = result.kind === 'response' && result.status >= 200 && result.status < 300;
    await this.deps.deliveryLog.record({
      ...logLineKeys(input),
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
    input: DispatchInput,
    reason: Extract<DispatchResult, { kind: 'skipped' }>['reason'],
    detail: string,
  ): Promise<DispatchResult> {
    await this.deps.deliveryLog.record({
      ...logLineKeys(input),
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
