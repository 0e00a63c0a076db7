import { ApplicationFailure } from '@temporalio/activity';
import { WEBHOOK_RETRY_SCHEDULE } from '../../src/core/retry-schedule';
import type { AttemptDeliveryInput } from '../../activities/deliver-webhook.activities';
import {
  deliverWebhookWorkflowId,
  type AttemptResult,
  type DeliverWebhookInput,
  type DeliverWebhookResult,
  type DeliveryEventInput,
  type HoldDeliveryInput,
} from '../../workflows/contracts/deliver-webhook';
import { invoiceReceivedEvent } from '../unit/webhooks/hook-fixture';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * Every branch of deliverWebhook on the time-skipping test server, with stubbed activities: what each attempt result
 * makes the run do (wait, retry, notify, switch the hook off, hand off, hold, give up) and what it ends with. The
 * five-day retry schedule runs in seconds.
 */

const sent = (httpStatus: number, extra: Partial<AttemptResult> = {}): AttemptResult =>
  ({
    kind: 'sent',
    ok: httpStatus >= 200 && httpStatus < 300,
    httpStatus,
    latencyMs: 5,
    url: 'https://receiver.example/hook',
    ...extra,
  }) as AttemptResult;
const timedOut: AttemptResult = {
  kind: 'failed',
  error: 'timed out after 10000 ms',
  timedOut: true,
  latencyMs: 10_000,
  url: 'https://receiver.example/hook',
};

describe('deliverWebhook branches (time-skipping, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  let n = 0;
  const input = (extra: Partial<DeliverWebhookInput> = {}): DeliverWebhookInput => {
    n += 1;
    return {
      tenantId: 't-1',
      eventId: invoiceReceivedEvent.id,
      hookId: 'h-1',
      deliveryId: `d-${n}`,
      schedule: { kind: 'table', delaysMs: [1_000, 60_000, 3_600_000] },
      maxAttemptTimeoutMs: 10_000,
      event: invoiceReceivedEvent,
      eventPartyKey: '0106:12345678',
      hookRev: 3,
      ...extra,
    };
  };

  /**
   * Runs one delivery whose attempts answer `results` in order (the last repeats; an Error fails the activity);
   * resolves the run's result and what the activities were asked.
   */
  async function deliver(results: Array<AttemptResult | Error>, runInput = input()) {
    const attempts: AttemptDeliveryInput[] = [];
    const notices: DeliveryEventInput[] = [];
    const disabled: unknown[] = [];
    const holds: HoldDeliveryInput[] = [];
    const activities = {
      async attemptDelivery(a: AttemptDeliveryInput): Promise<AttemptResult> {
        attempts.push(a);
        const r = results[Math.min(attempts.length - 1, results.length - 1)]!;
        if (r instanceof Error) throw ApplicationFailure.nonRetryable(r.message, 'STORAGE_FAILED');
        return r;
      },
      async publishDeliveryEvent(e: DeliveryEventInput) {
        notices.push(e);
        return { eventId: e.eventId, label: 'routed', deliveries: 1 };
      },
      async disableHook(d: unknown) {
        disabled.push(d);
        return true;
      },
      async holdDelivery(h: HoldDeliveryInput) {
        holds.push(h);
        return 'seq-step';
      },
    };
    const workflowId = deliverWebhookWorkflowId(runInput.tenantId, runInput.deliveryId);
    // The run's own span in server time (start to close), where the skipped timers show.
    const { result, elapsedMs } = await withStubbedWorker(env(), activities, async (client, taskQueue) => {
      const r = await client.workflow.execute('deliverWebhook', { taskQueue, workflowId, args: [runInput] });
      const run = await client.workflow.getHandle(workflowId).describe();
      return { result: r, elapsedMs: (run.closeTime?.getTime() ?? NaN) - run.startTime.getTime() };
    });
    return { result: result as DeliverWebhookResult, attempts, notices, disabled, holds, workflowId, elapsedMs };
  }

  it('delivered: one attempt carrying the event, the routed rev and the run’s offer; no notice', async () => {
    const d = await deliver([sent(204)]);
    expect(d.result).toEqual({ outcome: 'delivered', attempts: 1, httpStatus: 204 });
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({
      tenantId: 't-1',
      hookId: 'h-1',
      attempt: 1,
      event: invoiceReceivedEvent,
      hookRev: 3,
      run: { progress: { attempts: 0, throttled: 0 } },
    });
    expect(d.attempts[0]!.run!.input).not.toHaveProperty('event');
    expect(d.notices).toEqual([]);
  });

  it('retried then delivered: HookSentRetry per failure (a timeout, a 500), no rev on retries', async () => {
    const d = await deliver([timedOut, sent(500), sent(204)]);
    expect(d.result).toEqual({ outcome: 'delivered', attempts: 3, httpStatus: 204 });
    expect(d.attempts.map((a) => [a.attempt, a.hookRev])).toEqual([
      [1, 3],
      [2, undefined],
      [3, undefined],
    ]);
    expect(d.notices.map((e) => [e.kind.topic, e.attempt, e.error, e.httpStatus])).toEqual([
      ['HookSentRetry', 1, 'timed out after 10000 ms', undefined],
      ['HookSentRetry', 2, 'HTTP 500', 500],
    ]);
    expect(d.notices[0]).toMatchObject({
      originalEventId: invoiceReceivedEvent.id,
      original: { event: invoiceReceivedEvent, partyKey: '0106:12345678' },
    });
    // Full jitter within the first two waits of the table (1 s, 1 min).
    expect(d.elapsedMs).toBeLessThanOrEqual(61_000 + 5_000);
    expect(new Set(d.notices.map((e) => e.eventId)).size).toBe(2);
  });

  it('gone: a 410 switches the hook off and ends with HookSentError (gone)', async () => {
    const d = await deliver([sent(410)]);
    expect(d.result).toEqual({ outcome: 'gone', attempts: 1, httpStatus: 410, reason: 'HTTP 410' });
    expect(d.disabled).toEqual([{ tenantId: 't-1', hookId: 'h-1', reason: 'gone' }]);
    expect(d.notices.map((e) => e.kind)).toEqual([{ topic: 'HookSentError', reason: 'gone' }]);
  });

  it('exhausted: the five-day schedule runs out, HookSentRetry per failed attempt, HookSentError last', async () => {
    const d = await deliver([sent(503)], input({ schedule: WEBHOOK_RETRY_SCHEDULE }));
    expect(d.result).toMatchObject({ outcome: 'exhausted', httpStatus: 503, reason: 'HTTP 503' });
    const attempts = d.result.attempts;
    expect(attempts).toBeGreaterThan(10);
    expect(d.attempts).toHaveLength(attempts);
    expect(d.notices.filter((e) => e.kind.topic === 'HookSentRetry')).toHaveLength(attempts - 1);
    expect(d.notices.at(-1)).toMatchObject({
      attempt: attempts,
      kind: { topic: 'HookSentError', reason: 'exhausted' },
    });
    expect(d.elapsedMs).toBeGreaterThan(2 * 24 * 3_600_000);
    expect(d.elapsedMs).toBeLessThanOrEqual(5 * 24 * 3_600_000 + 12 * 3_600_000);
  });

  it('handed off: an output rule’s topic instead of a retry; a 2xx with one is delivered and handed on', async () => {
    const failed = await deliver([{ ...timedOut, outputTopic: 'SendInvoiceFallback' }]);
    expect(failed.result).toEqual({
      outcome: 'handed-off',
      attempts: 1,
      reason: 'timed out after 10000 ms',
      publishedTopic: 'SendInvoiceFallback',
    });
    expect(failed.notices.map((e) => e.kind)).toEqual([{ topic: 'output', outputTopic: 'SendInvoiceFallback' }]);
    const ok = await deliver([sent(200, { outputTopic: 'InvoiceDelivered' })]);
    expect(ok.result).toEqual({
      outcome: 'delivered',
      attempts: 1,
      httpStatus: 200,
      publishedTopic: 'InvoiceDelivered',
    });
    expect(ok.notices.map((e) => e.kind)).toEqual([{ topic: 'output', outputTopic: 'InvoiceDelivered' }]);
  });

  it('throttled: waits as admission says and tries again, counting refusals, which are not attempts', async () => {
    const d = await deliver([{ kind: 'throttled', waitMs: 100 }, { kind: 'throttled', waitMs: 30_000 }, sent(204)]);
    expect(d.result).toEqual({ outcome: 'delivered', attempts: 1, httpStatus: 204 });
    expect(d.attempts.map((a) => [a.attempt, a.run!.progress.throttled])).toEqual([
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(d.elapsedMs).toBeGreaterThanOrEqual(30_100);
  });

  it('held on a stuck hook: the run ends held; the release’s next run goes on from the stored progress', async () => {
    const first = await deliver([sent(503), { kind: 'held', seq: 'seq-1' }]);
    expect(first.result).toEqual({
      outcome: 'held',
      attempts: 1,
      reason: 'the hook is stuck; the delivery is held until it answers again',
    });
    expect(first.notices.map((e) => e.kind.topic)).toEqual(['HookSentRetry']);
    expect(first.holds).toEqual([]);
    // What the attempt stored (the run's offer with its event and progress) starts the next run under the same id.
    const offer = first.attempts[1]!.run!;
    const released = await deliver([sent(204)], {
      ...offer.input,
      event: invoiceReceivedEvent,
      resume: { ...offer.progress, throttled: offer.progress.throttled + 1 },
    });
    expect(released.workflowId).toBe(first.workflowId);
    expect(released.result).toEqual({ outcome: 'delivered', attempts: 2, httpStatus: 204 });
    expect(released.attempts.map((a) => [a.attempt, a.hookRev])).toEqual([[2, undefined]]);
  });

  it('held by the run’s own step while an earlier record is being released', async () => {
    const d = await deliver([{ kind: 'hold', dueInMs: 900_000 }]);
    expect(d.result).toMatchObject({ outcome: 'held', attempts: 0 });
    expect(d.holds).toHaveLength(1);
    expect(d.holds[0]).toMatchObject({
      workflowId: d.workflowId,
      dueInMs: 900_000,
      input: { deliveryId: d.attempts[0]!.deliveryId, event: invoiceReceivedEvent, resume: { throttled: 1 } },
    });
    expect(d.holds[0]!.runId).toEqual(expect.any(String));
  });

  it('overdue: waited for a slot longer than it may: HookSentError (exhausted) without an attempt', async () => {
    const d = await deliver([{ kind: 'overdue' }]);
    expect(d.result).toEqual({
      outcome: 'exhausted',
      attempts: 0,
      reason: 'the hook stayed at its concurrency cap for longer than the delivery may wait',
    });
    expect(d.notices.map((e) => [e.kind, e.attempt])).toEqual([[{ topic: 'HookSentError', reason: 'exhausted' }, 0]]);
  });

  it('skipped: the hook was deleted or switched off; nothing more happens', async () => {
    const d = await deliver([{ kind: 'skipped', reason: 'hook-inactive', detail: 'the hook is switched off' }]);
    expect(d.result).toEqual({ outcome: 'skipped', attempts: 0, reason: 'the hook is switched off' });
    expect(d.notices).toEqual([]);
  });

  it('a gateway failure of the attempt counts as a failed attempt on the schedule', async () => {
    const d = await deliver([new Error('database away'), sent(204)]);
    expect(d.result).toEqual({ outcome: 'delivered', attempts: 2, httpStatus: 204 });
    expect(d.notices).toHaveLength(1);
    expect(d.notices[0]!.error).toMatch(/^gateway error: database away/);
  });
});
