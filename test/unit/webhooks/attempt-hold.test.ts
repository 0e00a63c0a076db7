import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createWebhookActivities,
  type AttemptDeliveryInput,
  type WebhookServices,
} from '../../../activities/webhooks.activities';
import {
  throttleBoundMs,
  throttleWaitMs,
  type AttemptResult,
  type HoldDeliveryInput,
} from '../../../src/core/webhook-delivery';
import { WEBHOOK_RETRY_SCHEDULE } from '../../../src/core/retry-schedule';
import { invoiceReceivedEvent } from './hook-fixture';

// An attempt that finds its hook stuck holds the delivery itself when the run offers its input: the run then ends
// after that one activity. What it stores is what the run's own hold step would have stored.

const event = invoiceReceivedEvent;
const schedule = WEBHOOK_RETRY_SCHEDULE;
const DAY = 24 * 3600_000;

function setup(result: AttemptResult, withHeld = true, busy = false) {
  const holds: Array<{ h: HoldDeliveryInput; meta: { topic: string; partyKey: string } }> = [];
  const record = async (h: HoldDeliveryInput, meta: { topic: string; partyKey: string }) => {
    holds.push({ h, meta });
    return 'seq-1';
  };
  const services = {
    attempts: { attempt: async () => result },
    events: { get: async () => null },
    ...(withHeld
      ? {
          held: {
            hold: record,
            // An earlier run's record still being released: the attempt holds nothing.
            tryHold: async (h: HoldDeliveryInput, meta: { topic: string; partyKey: string }) =>
              busy ? undefined : record(h, meta),
          },
        }
      : {}),
  } as unknown as WebhookServices;
  const env = new MockActivityEnvironment({
    workflowExecution: { workflowId: 'webhook-delivery:t-1:d-1', runId: 'run-1' },
  });
  const attempt = (input: AttemptDeliveryInput) =>
    env.run(createWebhookActivities({ webhooks: services }).attemptDelivery, input);
  return { attempt, holds };
}

const input = (startedAtMs: number, throttled = 0): AttemptDeliveryInput => ({
  tenantId: 't-1',
  eventId: 'ev-1',
  hookId: 'h-1',
  deliveryId: 'd-1',
  attempt: 1,
  event,
  hold: {
    input: {
      tenantId: 't-1',
      eventId: 'ev-1',
      hookId: 'h-1',
      deliveryId: 'd-1',
      schedule,
      maxAttemptTimeoutMs: 10_000,
      eventPartyKey: 'p-key',
    },
    progress: { attempts: 0, startedAtMs, throttled },
  },
});

const stuck: AttemptResult = { kind: 'throttled', retryInMs: 15 * 60_000, parked: true };

describe('an attempt on a stuck hook', () => {
  it('holds the delivery with the run’s input, the event and its progress, due after the stuck hook’s wait', async () => {
    const { attempt, holds } = setup(stuck);
    const before = Date.now();
    const r = await attempt(input(before - 1000, 2));
    expect(r).toEqual({ ...stuck, heldSeq: 'seq-1' });
    expect(holds).toHaveLength(1);
    const { h, meta } = holds[0]!;
    expect(h.workflowId).toBe('webhook-delivery:t-1:d-1');
    expect(h.runId).toBe('run-1');
    expect(h.input).toMatchObject({
      tenantId: 't-1',
      hookId: 'h-1',
      schedule,
      event,
      resume: { attempts: 0, startedAtMs: before - 1000, throttled: 3 },
    });
    // Half the stuck hook's wait plus a random half of it.
    expect(h.dueInMs).toBeGreaterThanOrEqual(7.5 * 60_000);
    expect(h.dueInMs).toBeLessThanOrEqual(15 * 60_000);
    expect(meta).toEqual({ topic: 'InvoiceReceived', partyKey: 'p-key' });
  });

  it("leaves the hold to the run's own step while an earlier run's record is still being released", async () => {
    const { attempt, holds } = setup(stuck, true, true);
    expect(await attempt(input(Date.now() - 1000, 2))).toEqual(stuck);
    expect(holds).toEqual([]);
  });

  it('holds nothing past the bound of waiting for a slot, so the run can give up instead', async () => {
    const { attempt, holds } = setup(stuck);
    const r = await attempt(input(Date.now() - 5 * DAY));
    expect(r).toEqual(stuck);
    expect(holds).toEqual([]);
  });

  it('holds nothing when the try was only throttled, not parked, when the run offers no input, or with no store', async () => {
    const plain = setup({ kind: 'throttled' });
    expect(await plain.attempt(input(Date.now()))).toEqual({ kind: 'throttled' });
    const older = setup(stuck);
    const { hold: _hold, ...withoutOffer } = input(Date.now());
    expect(await older.attempt(withoutOffer)).toEqual(stuck);
    const noStore = setup(stuck, false);
    expect(await noStore.attempt(input(Date.now()))).toEqual(stuck);
    expect([...plain.holds, ...older.holds]).toEqual([]);
  });
});

describe('throttle waits', () => {
  it('start short and double up to 30 s, or take the stuck hook’s wait, with jitter in the upper half', () => {
    expect(throttleWaitMs(1, undefined, 0)).toBe(50);
    expect(throttleWaitMs(1, undefined, 1)).toBe(100);
    expect(throttleWaitMs(4, undefined, 1)).toBe(800);
    expect(throttleWaitMs(30, undefined, 1)).toBe(30_000);
    expect(throttleWaitMs(1, 15 * 60_000, 0)).toBe(7.5 * 60_000);
  });

  it('are bounded by the retry window, never less than a day', () => {
    expect(throttleBoundMs(schedule)).toBe(5 * DAY);
    expect(throttleBoundMs({ kind: 'table', delaysMs: [1000, 2000] })).toBe(DAY);
  });
});
