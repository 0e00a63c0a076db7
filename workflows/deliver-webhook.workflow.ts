import {
  ActivityFailure,
  condition,
  continueAsNew,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { nextDelay } from '../src/core/retry-schedule';
import {
  DELIVERY_SEARCH_ATTRIBUTES,
  HOOK_ANSWERED_SIGNAL,
  type HookAnswered,
  type AttemptResult,
  type DeliverWebhookInput,
  type DeliverWebhookResult,
  type DeliveryEventInput,
  type DeliveryProgress,
  deliveryEventInput,
  throttleBoundMs,
  throttleWaitMs,
} from '../src/core/webhook-delivery';

/**
 * One run per (event, hook) delivery; the id derives from the delivery id, so a repeated publish starts nothing new
 * and a slow or dead hook delays no other hook's deliveries (no head-of-line blocking: nothing is queued behind it).
 * Each attempt is one activity that builds, signs and POSTs the body with that attempt's sentOn. The schedule comes
 * in as data. Failed attempts publish HookSentRetry (while a retry follows) or HookSentError (the end); a 410 switches
 * the hook off; an output rule that matches hands the event on under its own topic and ends the delivery.
 */

/**
 * A delivery throttled on a stuck hook is held in the database and its run ends (HeldDeliveries), instead of waiting
 * open on a timer as runs without this marker do: a few hundred open runs slowed every other hook (docs/benchmarks.md).
 */
const HOLD_STUCK_DELIVERIES = 'hold-stuck-deliveries';

/** The worker saw the hook answer again: a delivery parked on it comes back (within the given spread). */
const hookAnsweredSignal = defineSignal<[HookAnswered]>(HOOK_ANSWERED_SIGNAL);

/** Publishing must eventually succeed (the event is the customer's only notice), so it retries without a count. */
const publishSteps = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Continue as new well before the history limits (51,200 events): a five-day delivery of a busy hook may loop long. */
const MAX_HISTORY_EVENTS = 4_000;

function causeOf(e: ActivityFailure): string {
  const cause = e.cause;
  return cause?.message ? cause.message.slice(0, 300) : 'activity failed';
}

export async function deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
  const attemptSteps = proxyActivities<Activities>({
    // Above the longest HTTP timeout; heartbeats during the request catch a dead worker much sooner.
    startToCloseTimeout: input.maxAttemptTimeoutMs + 30_000,
    heartbeatTimeout: '30 seconds',
    // Only the gateway's own failures (storage) reach Temporal's retry; what the receiver does is a result.
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
  });

  const progress: DeliveryProgress = input.resume
    ? { ...input.resume }
    : { attempts: 0, startedAtMs: Date.now(), throttled: 0 };
  const ids = { tenantId: input.tenantId, eventId: input.eventId, hookId: input.hookId, deliveryId: input.deliveryId };
  const { event: _event, resume: _resume, ...holdInput } = input;
  // Set by a wake since the last try began: one arriving while a try is on its way to being parked is kept.
  let woken: HookAnswered | undefined;
  setHandler(hookAnsweredSignal, (w) => {
    woken = w;
  });
  const wakeSpreadMs = () => Math.max(0, woken?.withinMs ?? 0);

  const publish = (
    attempt: number,
    r: Extract<AttemptResult, { kind: 'sent' | 'failed' }>,
    kind: DeliveryEventInput['kind'],
  ) =>
    publishSteps.publishDeliveryEvent(
      deliveryEventInput(
        input,
        { hookId: input.hookId, deliveryId: input.deliveryId, eventId: uuid4(), attempt },
        r,
        kind,
      ),
    );

  for (;;) {
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > MAX_HISTORY_EVENTS) {
      await continueAsNew<typeof deliverWebhook>({ ...input, resume: progress });
    }

    const attempt = progress.attempts + 1;
    woken = undefined;
    let r: AttemptResult;
    try {
      r = await attemptSteps.attemptDelivery({
        ...ids,
        attempt,
        ...(input.ignoreInactive ? { ignoreInactive: true } : {}),
        ...(input.event ? { event: input.event } : {}),
        ...(attempt === 1 && input.hookRev !== undefined ? { hookRev: input.hookRev } : {}),
        hold: { input: holdInput, progress: { ...progress } },
      });
    } catch (e) {
      if (!(e instanceof ActivityFailure)) throw e;
      // The gateway itself failed (storage down for minutes): count it as a failed attempt, keep to the schedule.
      r = { kind: 'failed', error: `gateway error: ${causeOf(e)}`, timedOut: false, latencyMs: 0, url: '' };
    }

    if (r.kind === 'throttled') {
      progress.throttled += 1;
      // A stuck hook (receiver hanging) says how long to stay away; otherwise back off from a short first wait.
      const wait = throttleWaitMs(progress.throttled, r.retryInMs, Math.random());
      // An attempt that held the delivery itself checked the bound (its hold is within it).
      if (r.heldSeq === undefined && Date.now() + wait - progress.startedAtMs > throttleBoundMs(input.schedule)) {
        const failed = {
          kind: 'failed' as const,
          error: 'the hook stayed at its concurrency cap for longer than the delivery may wait',
          timedOut: false,
          latencyMs: 0,
          url: '',
        };
        await publish(progress.attempts, failed, { topic: 'HookSentError', reason: 'exhausted' });
        return { outcome: 'exhausted', attempts: progress.attempts, reason: failed.error };
      }
      if (!r.parked) {
        await sleep(wait);
        continue;
      }
      if (patched(HOLD_STUCK_DELIVERIES)) {
        // Held: the next run starts from the stored input when the hook answers, a timeout frees a slot for this
        // delivery, or `wait` has passed. A wake that came before the hold means the hook is back: try again (an
        // attempt that held the delivery itself has held it by then, so the record is taken back first).
        if (woken === undefined || r.heldSeq !== undefined) {
          const held = {
            outcome: 'held' as const,
            attempts: progress.attempts,
            reason: 'the hook is stuck; the delivery is held until it answers again',
          };
          // Older attempts (and those that found the bound passed) leave the hold to this step.
          const seq =
            r.heldSeq ??
            (await publishSteps.holdDelivery({
              workflowId: info.workflowId,
              runId: info.runId,
              input: { ...input, resume: { ...progress } },
              dueInMs: wait,
            }));
          if (woken === undefined) return held;
          // The hook answered while the delivery was being held: take the record back and try again, unless a release
          // claimed it first (that release starts the next run once this one has ended).
          if (!(await publishSteps.unholdDelivery({ workflowId: info.workflowId, seq }))) return held;
        }
        progress.throttled = 0;
        const spread = wakeSpreadMs();
        if (spread > 0) await sleep(Math.round(Math.random() * spread));
        continue;
      }
      // Parked on a stuck hook: the worker signals when the hook answers; the timer covers a wake that never comes.
      if (await condition(() => woken !== undefined, wait)) {
        progress.throttled = 0;
        const spread = wakeSpreadMs();
        if (spread > 0) await sleep(Math.round(Math.random() * spread));
      }
      continue;
    }
    progress.throttled = 0;

    if (r.kind === 'skipped') return { outcome: 'skipped', attempts: progress.attempts, reason: r.detail };

    progress.attempts = attempt;
    // A start that already set attempt 1 saves the happy path one command (older runs started at 0 upsert it).
    if (input.searchAttributes && !(attempt === 1 && input.attemptOneAtStart))
      upsertSearchAttributes([{ key: DELIVERY_SEARCH_ATTRIBUTES.attempt, value: attempt }]);
    const status = r.kind === 'sent' ? { httpStatus: r.httpStatus } : {};

    if (r.kind === 'sent' && r.ok) {
      if (r.outputTopic) await publish(attempt, r, { topic: 'output', outputTopic: r.outputTopic });
      return {
        outcome: 'delivered',
        attempts: attempt,
        ...status,
        ...(r.outputTopic ? { publishedTopic: r.outputTopic } : {}),
      };
    }
    const reason = r.kind === 'sent' ? `HTTP ${r.httpStatus}` : r.error;
    if (r.outputTopic) {
      await publish(attempt, r, { topic: 'output', outputTopic: r.outputTopic });
      return { outcome: 'handed-off', attempts: attempt, ...status, reason, publishedTopic: r.outputTopic };
    }
    if (r.kind === 'sent' && r.httpStatus === 410) {
      await publishSteps.disableHook({ tenantId: input.tenantId, hookId: input.hookId, reason: 'gone' });
      await publish(attempt, r, { topic: 'HookSentError', reason: 'gone' });
      return { outcome: 'gone', attempts: attempt, ...status, reason };
    }

    const retryAfterMs = r.kind === 'sent' ? r.retryAfterMs : undefined;
    const delay = nextDelay(
      input.schedule,
      attempt,
      Date.now() - progress.startedAtMs,
      retryAfterMs,
      Math.random,
      progress.previousDelayMs,
    );
    if (delay === null) {
      await publish(attempt, r, { topic: 'HookSentError', reason: 'exhausted' });
      return { outcome: 'exhausted', attempts: attempt, ...status, reason };
    }
    // The notice and the wait run together, so a slow publish does not push the next attempt back.
    await Promise.all([
      publish(attempt, r, { topic: 'HookSentRetry', nextAttemptOn: new Date(Date.now() + delay).toISOString() }),
      sleep(delay),
    ]);
    progress.previousDelayMs = delay;
  }
}
