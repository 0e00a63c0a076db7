import {
  ActivityFailure,
  continueAsNew,
  proxyActivities,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { nextDelay } from '../src/core/retry-schedule';
import {
  DELIVERY_SEARCH_ATTRIBUTES,
  deliveryEventInput,
  type AttemptResult,
  type DeliverWebhookInput,
  type DeliverWebhookResult,
  type DeliveryNoticeKind,
  type DeliveryProgress,
} from './contracts/deliver-webhook';

/**
 * One run per (event, hook) delivery; the id derives from the delivery id, so a repeated publish starts nothing new
 * and a slow or dead hook delays no other hook's deliveries (no head-of-line blocking: nothing is queued behind it).
 * Each attempt is one activity that builds, signs and POSTs the body with that attempt's sentOn. The schedule comes
 * in as data. Failed attempts publish HookSentRetry (while a retry follows) or HookSentError (the end); a 410 switches
 * the hook off; an output rule that matches hands the event on under its own topic and ends the delivery. A delivery
 * of a stuck hook is held in the database and its run ends (`held`); its next run continues under the same id.
 */

/** Publishing must eventually succeed (the event is the customer's only notice), so it retries without a count. */
const publishSteps = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Continue as new well before the history limits (51,200 events): a five-day delivery of a busy hook may loop long. */
const MAX_HISTORY_EVENTS = 4_000;

const HELD_REASON = 'the hook is stuck; the delivery is held until it answers again';
const OVERDUE_ERROR = 'the hook stayed at its concurrency cap for longer than the delivery may wait';

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
  const { event: _event, resume: _resume, ...runInput } = input;

  const publish = (attempt: number, r: Extract<AttemptResult, { kind: 'sent' | 'failed' }>, kind: DeliveryNoticeKind) =>
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
    let r: AttemptResult;
    try {
      r = await attemptSteps.attemptDelivery({
        tenantId: input.tenantId,
        eventId: input.eventId,
        hookId: input.hookId,
        deliveryId: input.deliveryId,
        attempt,
        ...(input.ignoreInactive ? { ignoreInactive: true } : {}),
        event: input.event,
        ...(attempt === 1 && input.hookRev !== undefined ? { hookRev: input.hookRev } : {}),
        run: { input: runInput, progress: { ...progress } },
      });
    } catch (e) {
      if (!(e instanceof ActivityFailure)) throw e;
      // The gateway itself failed (storage down for minutes): count it as a failed attempt, keep to the schedule.
      r = { kind: 'failed', error: `gateway error: ${causeOf(e)}`, timedOut: false, latencyMs: 0, url: '' };
    }

    switch (r.kind) {
      case 'throttled':
        // No slot under the hook's cap, the hook not stuck: try again shortly.
        progress.throttled += 1;
        await sleep(r.waitMs);
        continue;
      case 'held':
        // The attempt held the delivery: its next run starts from the stored input.
        return { outcome: 'held', attempts: progress.attempts, reason: HELD_REASON };
      case 'hold':
        // The hook is stuck and an earlier run's record is still being released: hold it here, then end.
        progress.throttled += 1;
        await publishSteps.holdDelivery({
          workflowId: info.workflowId,
          runId: info.runId,
          input: { ...input, resume: { ...progress } },
          dueInMs: r.dueInMs,
        });
        return { outcome: 'held', attempts: progress.attempts, reason: HELD_REASON };
      case 'overdue': {
        const failed = { kind: 'failed' as const, error: OVERDUE_ERROR, timedOut: false, latencyMs: 0, url: '' };
        await publish(progress.attempts, failed, { topic: 'HookSentError', reason: 'exhausted' });
        return { outcome: 'exhausted', attempts: progress.attempts, reason: OVERDUE_ERROR };
      }
      case 'skipped':
        return { outcome: 'skipped', attempts: progress.attempts, reason: r.detail };
    }
    progress.throttled = 0;

    progress.attempts = attempt;
    // The start set attempt 1; the run raises it from the second attempt on.
    if (input.searchAttributes && attempt > 1)
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
