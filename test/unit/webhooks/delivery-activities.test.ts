import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookActivities, type AttemptDeliveryInput } from '../../../activities/deliver-webhook.activities';
import { WEBHOOK_RETRY_SCHEDULE } from '../../../src/core/retry-schedule';
import type { AttemptInput, WebhookDeliveries } from '../../../src/webhooks';
import { invoiceReceivedEvent } from './hook-fixture';

// The delivery activities are adapters: the attempt gets the run's own ids and its log line's key from the activity
// context, everything else goes through as the workflow sent it.

const input: AttemptDeliveryInput = {
  tenantId: 't-1',
  eventId: 'ev-1',
  hookId: 'h-1',
  deliveryId: 'd-1',
  attempt: 1,
  event: invoiceReceivedEvent,
  run: {
    input: {
      tenantId: 't-1',
      eventId: 'ev-1',
      hookId: 'h-1',
      deliveryId: 'd-1',
      schedule: WEBHOOK_RETRY_SCHEDULE,
      maxAttemptTimeoutMs: 10_000,
      eventPartyKey: 'p-key',
    },
    progress: { attempts: 0, startedAtMs: 1, throttled: 0 },
  },
};

function setup() {
  const calls: AttemptInput[] = [];
  const webhooks = {
    attempt: async (a: AttemptInput) => {
      calls.push(a);
      return { kind: 'throttled', waitMs: 100 };
    },
  } as unknown as WebhookDeliveries;
  return { activities: createWebhookActivities({ webhooks }), calls };
}

describe('attemptDelivery', () => {
  it('offers the run with its workflow and run id and keys the log line by the run', async () => {
    const { activities, calls } = setup();
    const env = new MockActivityEnvironment({
      workflowExecution: { workflowId: 'webhook-delivery:t-1:d-1', runId: 'run-1' },
    });
    await expect(env.run(activities.attemptDelivery, input)).resolves.toEqual({ kind: 'throttled', waitMs: 100 });
    expect(calls).toEqual([
      {
        ...input,
        runKey: 'run-1',
        run: { ...input.run, workflowId: 'webhook-delivery:t-1:d-1', runId: 'run-1' },
      },
    ]);
  });

  it('fails clearly where the webhook wing is not wired', async () => {
    const env = new MockActivityEnvironment();
    await expect(env.run(createWebhookActivities({}).attemptDelivery, input)).rejects.toMatchObject({
      code: 'NOT_IMPLEMENTED',
    });
  });
});
