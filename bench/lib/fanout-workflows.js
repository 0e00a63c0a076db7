'use strict';
// Workflow bundle of the webhook benchmark's comparison worker (bench/lib/compare-worker.js): the product's
// deliverWebhook (one run per event and hook) next to deliverEventFanOut, the alternative the benchmark weighs it
// against: one run per event that delivers to all of the event's hooks, each hook on its own loop inside the run.
// The fan-out keeps the product's per-hook semantics where they shape cost and latency: the same attemptDelivery
// activity (hook and event read, body built with the attempt's sentOn, signed, POSTed, delivery-log line), the same
// activity options, the per-hook cap's throttling, the retry schedule as data, HookSentRetry/HookSentError per hook
// and a DeliveryAttempt search attribute. It is not the product: it has no continue-as-new (a run's hook loops would
// all have to be quiet at once to hand their state on), and no per-hook HookId attribute (one run, several hooks).

const { ActivityFailure, proxyActivities, sleep, upsertSearchAttributes, uuid4 } = require('@temporalio/workflow');
const { deliverWebhook } = require('../../dist/workflows/deliver-webhook.workflow');
const { nextDelay } = require('../../dist/src/core/retry-schedule');
const { DELIVERY_SEARCH_ATTRIBUTES, deliveryEventInput } = require('../../dist/workflows/contracts/deliver-webhook');

const publishSteps = proxyActivities({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

const THROTTLE_FIRST_WAIT_MS = 100;
const THROTTLE_MAX_WAIT_MS = 30_000;

/**
 * input: { tenantId, eventId, event, eventPartyKey, hooks: [{ hookId, deliveryId }], schedule, maxAttemptTimeoutMs,
 * searchAttributes }; `event` (as published) is carried as the product's runs carry it.
 * Resolves { deliveries: [{ hookId, outcome, attempts }] } once every hook's delivery has ended.
 */
async function deliverEventFanOut(input) {
  const attemptSteps = proxyActivities({
    startToCloseTimeout: input.maxAttemptTimeoutMs + 30_000,
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
  });
  let highestAttempt = 0;

  const deliverOne = async ({ hookId, deliveryId }) => {
    const startedAtMs = Date.now();
    let attempts = 0;
    let throttled = 0;
    let previousDelayMs;
    const publish = (attempt, r, kind) =>
      publishSteps.publishDeliveryEvent(
        deliveryEventInput(input, { hookId, deliveryId, eventId: uuid4(), attempt }, r, kind),
      );
    for (;;) {
      const attempt = attempts + 1;
      let r;
      try {
        r = await attemptSteps.attemptDelivery({
          tenantId: input.tenantId,
          eventId: input.eventId,
          hookId,
          deliveryId,
          attempt,
          ...(input.event ? { event: input.event } : {}),
        });
      } catch (e) {
        if (!(e instanceof ActivityFailure)) throw e;
        r = {
          kind: 'failed',
          error: `gateway error: ${e.cause && e.cause.message ? e.cause.message : 'activity failed'}`,
          timedOut: false,
          latencyMs: 0,
          url: '',
        };
      }
      if (r.kind === 'throttled') {
        // The fan-out offers no run (nothing is held); it doubles its own waits, at least as long as admission says.
        throttled += 1;
        const top = Math.min(THROTTLE_MAX_WAIT_MS, THROTTLE_FIRST_WAIT_MS * 2 ** Math.min(throttled - 1, 20));
        const base = Math.max(r.waitMs, top);
        await sleep(Math.round(base / 2 + Math.random() * (base / 2)));
        continue;
      }
      throttled = 0;
      if (r.kind === 'skipped') return { hookId, outcome: 'skipped', attempts };
      attempts = attempt;
      if (input.searchAttributes && attempt > highestAttempt) {
        highestAttempt = attempt;
        upsertSearchAttributes([{ key: DELIVERY_SEARCH_ATTRIBUTES.attempt, value: attempt }]);
      }
      if (r.kind === 'sent' && r.ok) {
        if (r.outputTopic) await publish(attempt, r, { topic: 'output', outputTopic: r.outputTopic });
        return { hookId, outcome: 'delivered', attempts };
      }
      if (r.outputTopic) {
        await publish(attempt, r, { topic: 'output', outputTopic: r.outputTopic });
        return { hookId, outcome: 'handed-off', attempts };
      }
      if (r.kind === 'sent' && r.httpStatus === 410) {
        await publishSteps.disableHook({ tenantId: input.tenantId, hookId, reason: 'gone' });
        await publish(attempt, r, { topic: 'HookSentError', reason: 'gone' });
        return { hookId, outcome: 'gone', attempts };
      }
      const retryAfterMs = r.kind === 'sent' ? r.retryAfterMs : undefined;
      const delay = nextDelay(
        input.schedule,
        attempt,
        Date.now() - startedAtMs,
        retryAfterMs,
        Math.random,
        previousDelayMs,
      );
      if (delay === null) {
        await publish(attempt, r, { topic: 'HookSentError', reason: 'exhausted' });
        return { hookId, outcome: 'exhausted', attempts };
      }
      await Promise.all([
        publish(attempt, r, { topic: 'HookSentRetry', nextAttemptOn: new Date(Date.now() + delay).toISOString() }),
        sleep(delay),
      ]);
      previousDelayMs = delay;
    }
  };

  return { deliveries: await Promise.all(input.hooks.map(deliverOne)) };
}

module.exports = { deliverWebhook, deliverEventFanOut };
