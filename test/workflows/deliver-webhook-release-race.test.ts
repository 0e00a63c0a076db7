import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { TemporalDeliveryStarter, temporalDeliveryRuns } from '../../src/main/webhooks';
import type { ClaimedDelivery, HeldDeliveryDoc } from '../../src/storage/events/held-delivery.repository';
import type { AttemptResult } from '../../src/webhooks/deliver-attempt';
import { HeldDeliveries, type HeldStore } from '../../src/webhooks/held-deliveries';
import {
  deliverWebhookWorkflowId,
  type DeliverWebhookInput,
  type DeliverWebhookResult,
} from '../../workflows/contracts/deliver-webhook';
import { invoiceReceivedEvent } from '../unit/webhooks/hook-fixture';
import { requireEnv } from '../support/services';

/*
 * The deliverWebhook workflow on the real dev server with scripted activities: the hook answers (a release) while
 * the attempt that found it stuck is still holding the delivery, so the release meets the holding run still open.
 * It must wait for that run to end and then start the next one under the same id, from the stored progress: once,
 * never while the holder is open (the event would be sent twice), never not at all (it would wait until due).
 */
const { temporalAddress } = requireEnv();

/** One held record per workflow id, claimed by whoever asks first (the storage rules are tested elsewhere). */
class OneRecordStore implements HeldStore {
  readonly docs = new Map<string, HeldDeliveryDoc>();
  async hold(doc: Omit<HeldDeliveryDoc, 'seq'>): Promise<string> {
    this.docs.set(doc._id, { ...doc, seq: 'seq-1' });
    return 'seq-1';
  }
  async claim(id: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | null> {
    const d = this.docs.get(id);
    return d ? { ...d, claimNo: 1, claimUntil: new Date(now.getTime() + leaseMs) } : null;
  }
  async claimDue(): Promise<ClaimedDelivery[]> {
    return [];
  }
  async remove(c: ClaimedDelivery): Promise<void> {
    this.docs.delete(c._id);
  }
  async unclaimedIdsForHook(hookId: string): Promise<string[]> {
    return [...this.docs.values()].filter((d) => d.hookId === hookId).map((d) => d._id);
  }
  async hookIdsWithHeld(): Promise<string[]> {
    return [...new Set([...this.docs.values()].map((d) => d.hookId))];
  }
}

describe('deliverWebhook: a release that meets the run still holding the delivery', () => {
  const taskQueue = `deliver-webhook-release-race-${randomUUID()}`;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporalAddress });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await connection.close();
  });

  it('waits for the holding run to end, then starts the next run once, from the stored progress', async () => {
    const deliveryId = randomUUID();
    const workflowId = deliverWebhookWorkflowId('t-1', deliveryId);
    const store = new OneRecordStore();
    const starter = new TemporalDeliveryStarter(() => client, { taskQueue, searchAttributes: false });
    const held = new HeldDeliveries(
      store,
      (input, meta, startDelayMs) => starter.startDelivery(input, meta, 'redeliver', { startDelayMs }),
      temporalDeliveryRuns(() => client),
    );
    const input: DeliverWebhookInput = {
      tenantId: 't-1',
      eventId: invoiceReceivedEvent.id,
      hookId: 'h-1',
      deliveryId,
      schedule: { kind: 'table', delaysMs: [100] },
      maxAttemptTimeoutMs: 5_000,
      event: invoiceReceivedEvent,
      eventPartyKey: null,
    };
    const attempts: Array<{ runId: string; resumed: boolean }> = [];
    let release: Promise<boolean> | undefined;
    const activities = {
      async attemptDelivery(a: {
        run?: { input: Omit<DeliverWebhookInput, 'event'>; progress: { throttled: number } };
      }): Promise<AttemptResult> {
        const runId = Context.current().info.workflowExecution!.runId;
        attempts.push({ runId, resumed: a.run?.progress.throttled === 1 });
        if (attempts.length > 1)
          return { kind: 'sent', ok: true, httpStatus: 204, latencyMs: 1, url: 'https://receiver.test/hook' };
        // The hook is stuck: the attempt holds the delivery, and the hook answers before the run has ended.
        const resume = { attempts: 0, startedAtMs: Date.now(), throttled: 1 };
        const seq = (await held.tryHold({ workflowId, runId, input: { ...input, resume }, dueInMs: 60_000 }))!;
        release = held.releaseNewest('h-1', (_id, e) => {
          throw e;
        });
        await new Promise((r) => setTimeout(r, 300));
        return { kind: 'held', seq };
      },
      async publishDeliveryEvent(): Promise<void> {},
    };
    const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
    // The runner's prebuilt bundle when it has built one (a run without the type check builds none).
    const bundle = process.env.TEST_WORKFLOW_BUNDLE;
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      activities,
      ...(bundle && existsSync(bundle)
        ? { workflowBundle: { codePath: bundle } }
        : { workflowsPath: require.resolve('../../workflows') }),
    });
    try {
      await worker.runUntil(async () => {
        const first = await client.workflow.start('deliverWebhook', { taskQueue, workflowId, args: [input] });
        await expect(first.result()).resolves.toMatchObject({ outcome: 'held', attempts: 0 });
        while (!release) await new Promise((r) => setTimeout(r, 20));
        await expect(release).resolves.toBe(true);
        const latest = (await client.workflow.getHandle(workflowId).result()) as DeliverWebhookResult;
        expect(latest).toMatchObject({ outcome: 'delivered', attempts: 1, httpStatus: 204 });
      });
    } finally {
      await nativeConnection.close();
    }
    // Two runs under the id, one attempt each; the second carried the first's progress; the record is gone.
    expect(attempts).toHaveLength(2);
    expect(new Set(attempts.map((a) => a.runId)).size).toBe(2);
    expect(attempts[1]!.resumed).toBe(true);
    expect(store.docs.size).toBe(0);
  });
});
