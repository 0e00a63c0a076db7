import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import {
  SEND_ORDER_WORKFLOW,
  sendOrderWorkflowId,
  type CheckOrderResult,
  type OrderEventInput,
  type SendOrderAttempt,
  type SendOrderAttemptResult,
  type SendOrderInput,
  type SendOrderResult,
} from '../../workflows/contracts/send-order';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * The branches of sendOrder with stubbed activities on the time-skipping server: a refused check publishes
 * OrderSentError without an attempt; a receipt publishes OrderSent once; a temporary failure publishes OrderSentRetry
 * with the next attempt's time, waits the Peppol schedule's delay and sends the same order again; a refusal or the
 * exhausted schedule publishes OrderSentError.
 */

const HISTORIES = path.resolve(__dirname, '../replay/histories');
const HOUR = 3_600_000;

describe('sendOrder branches (time-skipping server, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  async function run(
    outcomes: Array<SendOrderAttemptResult['outcome']>,
    check: CheckOrderResult = { ok: true, orderId: 'PO-1' },
    record?: string,
  ) {
    const attempts: Array<SendOrderAttempt & { at: number }> = [];
    const events: Array<OrderEventInput & { at: number }> = [];
    const activities = {
      checkOrder: async () => check,
      sendOrderAttempt: async (i: SendOrderAttempt): Promise<SendOrderAttemptResult> => {
        attempts.push({ ...i, at: await env().currentTimeMs() });
        const outcome = outcomes[attempts.length - 1] ?? 'failed';
        return {
          outcome,
          to: 'iso6523-actorid-upis::0106:71717171',
          endpoint: 'https://c3.example.test/as4',
          messageId: 'm-1@invoice-gateway',
          ...(outcome === 'delivered' ? {} : { reason: 'HTTP 503' }),
        };
      },
      publishOrderEvent: async (i: OrderEventInput) => {
        events.push({ ...i, at: await env().currentTimeMs() });
        return { eventId: i.eventId };
      },
    };
    const args: SendOrderInput = {
      tenantId: 'test',
      documentId: randomUUID(),
      peppolSchedule: { kind: 'table', delaysMs: [2 * HOUR, 6 * HOUR] },
    };
    const result = await withStubbedWorker(env(), activities, async (client, taskQueue) => {
      const workflowId = sendOrderWorkflowId(args.tenantId, args.documentId);
      const out = (await client.workflow.execute(SEND_ORDER_WORKFLOW, {
        taskQueue,
        workflowId,
        args: [args],
      })) as SendOrderResult;
      if (process.env['RECORD_REPLAY_HISTORIES'] && record) {
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        writeFileSync(path.join(HISTORIES, `${record}.json`), `${historyToJSON(history)}\n`);
      }
      return out;
    });
    return { result, attempts, events, args };
  }

  it('publishes a retry per temporary failure, then OrderSent once the receipt comes', async () => {
    const r = await run(['retryable', 'delivered'], undefined, 'send-order-retried-then-sent');
    expect(r.result).toMatchObject({ outcome: 'sent', attempts: 2 });
    expect(r.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(r.attempts[1]?.firstAttemptAt).toBe(r.attempts[0]?.firstAttemptAt);
    expect(r.attempts[1]!.at - r.attempts[0]!.at).toBeGreaterThanOrEqual(2 * HOUR);
    expect(r.attempts[0]).not.toHaveProperty('peppolSchedule');
    expect(r.events.map((e) => [e.topic, e.attempt])).toEqual([
      ['OrderSentRetry', 1],
      ['OrderSent', 2],
    ]);
    const retry = r.events[0]!;
    expect(retry).toMatchObject({ documentId: r.args.documentId, reason: 'HTTP 503' });
    expect(Date.parse(retry.nextAttemptOn!)).toBeGreaterThanOrEqual(retry.at + 2 * HOUR - 1000);
    expect(r.events[1]).toMatchObject({ to: 'iso6523-actorid-upis::0106:71717171', messageId: 'm-1@invoice-gateway' });
    expect(r.result.eventId).toBe(r.events[1]?.eventId);
  });

  it('publishes OrderSentError without an attempt when the check refuses the order', async () => {
    const r = await run(
      ['delivered'],
      { ok: false, stage: 'validation', reasonCode: 'BV', reason: 'Invalid payload: [BV] PEPPOL-T01-R011' },
      'send-order-invalid',
    );
    expect(r.result).toMatchObject({ outcome: 'invalid', attempts: 0, reason: /PEPPOL-T01-R011/ });
    expect(r.attempts).toEqual([]);
    expect(r.events).toEqual([
      expect.objectContaining({ topic: 'OrderSentError', attempt: 0, stage: 'validation', reasonCode: 'BV' }),
    ]);
    expect(r.result.eventId).toBe(r.events[0]?.eventId);
  });

  it('publishes OrderSentError at once when the peer refuses (no retry)', async () => {
    const r = await run(['failed'], undefined, 'send-order-refused');
    expect(r.result).toMatchObject({ outcome: 'refused', attempts: 1, reason: 'HTTP 503' });
    expect(r.events).toEqual([expect.objectContaining({ topic: 'OrderSentError', attempt: 1, reason: 'HTTP 503' })]);
  });

  it('publishes OrderSentError when the schedule is exhausted, after a retry event per wait', async () => {
    const r = await run(['retryable', 'retryable', 'retryable']);
    expect(r.result).toMatchObject({ outcome: 'exhausted', attempts: 3 });
    expect(r.events.map((e) => e.topic)).toEqual(['OrderSentRetry', 'OrderSentRetry', 'OrderSentError']);
    expect(r.events[2]?.reason).toMatch(/no delivery after 3 attempts: HTTP 503/);
    expect(r.result.eventId).toBe(r.events[2]?.eventId);
  });
});
