import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { HOOK_ANSWERED_SIGNAL, type AttemptResult, type DeliverWebhookInput } from '../../src/core/webhook-delivery';
import { requireEnv } from '../support/services';

/*
 * The deliverWebhook workflow on the real dev server with scripted activities: a wake (the hook answered) that lands
 * while the attempt that found the hook stuck is holding the delivery. The run tries again at once, so it must take
 * the held record back first, or a later release would start a second run and send the event twice.
 */
const { temporalAddress } = requireEnv();

describe('deliverWebhook: a wake during an attempt that held the delivery', () => {
  const taskQueue = `deliver-webhook-wake-race-${randomUUID()}`;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporalAddress });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await connection.close();
  });

  async function run(unholdAnswer: boolean) {
    const workflowId = `webhook-delivery:t-1:${randomUUID()}`;
    const calls: string[] = [];
    const unheld: Array<{ workflowId: string; seq: string }> = [];
    const stuck: AttemptResult = { kind: 'throttled', retryInMs: 60_000, parked: true, heldSeq: 'seq-held' };
    const sent: AttemptResult = {
      kind: 'sent',
      ok: true,
      httpStatus: 204,
      latencyMs: 1,
      url: 'https://receiver.test/hook',
    };
    const activities = {
      async attemptDelivery(): Promise<AttemptResult> {
        calls.push('attemptDelivery');
        if (calls.length > 1) return sent;
        // The hook answers while this attempt is parking and holding the delivery: the wake reaches the run first.
        await client.workflow.getHandle(workflowId).signal(HOOK_ANSWERED_SIGNAL, { withinMs: 0 });
        return stuck;
      },
      async holdDelivery(): Promise<string> {
        calls.push('holdDelivery');
        return 'seq-step';
      },
      async unholdDelivery(input: { workflowId: string; seq: string }): Promise<boolean> {
        calls.push('unholdDelivery');
        unheld.push(input);
        return unholdAnswer;
      },
      async publishDeliveryEvent(): Promise<void> {
        calls.push('publishDeliveryEvent');
      },
    };
    const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
    const bundle = process.env.TEST_WORKFLOW_BUNDLE;
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      activities,
      ...(bundle ? { workflowBundle: { codePath: bundle } } : { workflowsPath: require.resolve('../../workflows') }),
    });
    const input: DeliverWebhookInput = {
      tenantId: 't-1',
      eventId: 'ev-1',
      hookId: 'h-1',
      deliveryId: 'd-1',
      schedule: { kind: 'table', delaysMs: [100] },
      maxAttemptTimeoutMs: 5_000,
    };
    try {
      const result = await worker.runUntil(
        client.workflow.execute('deliverWebhook', { taskQueue, workflowId, args: [input] }),
      );
      return { result, calls, unheld, workflowId };
    } finally {
      await nativeConnection.close();
    }
  }

  it('takes the held record back before it tries again', async () => {
    const { result, calls, unheld, workflowId } = await run(true);
    expect(calls).toEqual(['attemptDelivery', 'unholdDelivery', 'attemptDelivery']);
    expect(unheld).toEqual([{ workflowId, seq: 'seq-held' }]);
    expect(result).toMatchObject({ outcome: 'delivered', attempts: 1, httpStatus: 204 });
  });

  it('ends held when a release claimed the record first (that release starts the next run)', async () => {
    const { result, calls } = await run(false);
    expect(calls).toEqual(['attemptDelivery', 'unholdDelivery']);
    expect(result).toMatchObject({ outcome: 'held', attempts: 0 });
  });
});
