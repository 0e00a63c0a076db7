import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import {
  SEND_ORDER_RESPONSE_WORKFLOW,
  sendOrderResponseWorkflowId,
  type OrderResponseEventInput,
  type SendOrderResponseAttempt,
  type SendOrderResponseAttemptResult,
  type SendOrderResponseInput,
  type SendOrderResponseResult,
} from '../../workflows/contracts/send-order-response';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * The branches of sendOrderResponse with stubbed activities on the time-skipping server: a receipt publishes
 * OrderResponseSent once; a temporary failure publishes OrderResponseSentRetry with the next attempt's time, waits
 * the Peppol schedule's delay and sends the same response again (the first attempt's time travels); a refusal or the
 * exhausted schedule publishes OrderResponseSentError.
 */

const HISTORIES = path.resolve(__dirname, '../replay/histories');
const HOUR = 3_600_000;

describe('sendOrderResponse branches (time-skipping server, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  async function run(
    outcomes: Array<SendOrderResponseAttemptResult['outcome']>,
    input: Partial<SendOrderResponseInput>,
    record?: string,
  ) {
    const attempts: Array<SendOrderResponseAttempt & { at: number }> = [];
    const events: Array<OrderResponseEventInput & { at: number }> = [];
    const activities = {
      sendOrderResponseAttempt: async (i: SendOrderResponseAttempt): Promise<SendOrderResponseAttemptResult> => {
        attempts.push({ ...i, at: await env().currentTimeMs() });
        const outcome = outcomes[attempts.length - 1] ?? 'failed';
        return {
          outcome,
          responseDocumentId: 'or-1',
          to: 'iso6523-actorid-upis::0088:5790000435951',
          endpoint: 'https://c2.example.test/as4',
          messageId: 'm-1@invoice-gateway',
          ...(outcome === 'delivered' ? {} : { reason: 'HTTP 503' }),
        };
      },
      publishOrderResponseEvent: async (i: OrderResponseEventInput) => {
        events.push({ ...i, at: await env().currentTimeMs() });
        return { eventId: i.eventId };
      },
    };
    const args: SendOrderResponseInput = {
      tenantId: 'test',
      documentId: randomUUID(),
      responseCode: 'CA',
      lines: [{ lineId: '1', statusCode: '3', quantity: '2', note: 'Two only' }],
      peppolSchedule: { kind: 'table', delaysMs: [2 * HOUR, 6 * HOUR] },
      ...input,
    };
    const result = await withStubbedWorker(env(), activities, async (client, taskQueue) => {
      const workflowId = sendOrderResponseWorkflowId(args.tenantId, args.documentId, args.responseCode);
      const out = (await client.workflow.execute(SEND_ORDER_RESPONSE_WORKFLOW, {
        taskQueue,
        workflowId,
        args: [args],
      })) as SendOrderResponseResult;
      if (process.env['RECORD_REPLAY_HISTORIES'] && record) {
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        writeFileSync(path.join(HISTORIES, `${record}.json`), `${historyToJSON(history)}\n`);
      }
      return out;
    });
    return { result, attempts, events, args };
  }

  it('publishes a retry per temporary failure, then OrderResponseSent once the receipt comes', async () => {
    const r = await run(['retryable', 'delivered'], {}, 'send-order-response-retried-then-sent');
    expect(r.result).toMatchObject({ outcome: 'sent', responseDocumentId: 'or-1', attempts: 2 });
    expect(r.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    // The same response: the first attempt's time on both, the line answers on both; the wait is the schedule's.
    expect(r.attempts[1]?.firstAttemptAt).toBe(r.attempts[0]?.firstAttemptAt);
    expect(r.attempts[1]!.at - r.attempts[0]!.at).toBeGreaterThanOrEqual(2 * HOUR);
    expect(r.attempts[1]).toMatchObject({
      responseCode: 'CA',
      lines: [{ lineId: '1', statusCode: '3', quantity: '2', note: 'Two only' }],
    });
    expect(r.attempts[0]).not.toHaveProperty('peppolSchedule');
    expect(r.events.map((e) => [e.topic, e.attempt])).toEqual([
      ['OrderResponseSentRetry', 1],
      ['OrderResponseSent', 2],
    ]);
    const retry = r.events[0]!;
    expect(retry).toMatchObject({ documentId: r.args.documentId, responseDocumentId: 'or-1', reason: 'HTTP 503' });
    expect(Date.parse(retry.nextAttemptOn!)).toBeGreaterThanOrEqual(retry.at + 2 * HOUR - 1000);
    expect(r.result.eventId).toBe(r.events[1]?.eventId);
  });

  it('publishes OrderResponseSentError at once when the peer refuses (no retry)', async () => {
    const r = await run(['failed'], { responseCode: 'AP', lines: [] }, 'send-order-response-refused');
    expect(r.result).toMatchObject({ outcome: 'refused', attempts: 1, reason: 'HTTP 503' });
    expect(r.events).toEqual([
      expect.objectContaining({ topic: 'OrderResponseSentError', attempt: 1, reason: 'HTTP 503', responseCode: 'AP' }),
    ]);
  });

  it('publishes OrderResponseSentError when the schedule is exhausted, after a retry event per wait', async () => {
    const r = await run(['retryable', 'retryable', 'retryable'], {});
    expect(r.result).toMatchObject({ outcome: 'exhausted', attempts: 3 });
    expect(r.events.map((e) => e.topic)).toEqual([
      'OrderResponseSentRetry',
      'OrderResponseSentRetry',
      'OrderResponseSentError',
    ]);
    expect(r.events[2]?.reason).toMatch(/no delivery after 3 attempts: HTTP 503/);
    expect(r.result.eventId).toBe(r.events[2]?.eventId);
  });
});
