import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import {
  SEND_INVOICE_RESPONSE_WORKFLOW,
  sendInvoiceResponseWorkflowId,
  type InvoiceResponseEventInput,
  type SendInvoiceResponseAttempt,
  type SendInvoiceResponseAttemptResult,
  type SendInvoiceResponseInput,
  type SendInvoiceResponseResult,
} from '../../workflows/contracts/send-invoice-response';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * The branches of sendInvoiceResponse with stubbed activities on the time-skipping server: a receipt publishes
 * InvoiceResponseSent once; a temporary failure publishes InvoiceResponseSentRetry with the next attempt's time, waits
 * the Peppol schedule's delay and sends the same response again (the first attempt's time travels); a refusal or the
 * exhausted schedule publishes InvoiceResponseSentError.
 */

const HISTORIES = path.resolve(__dirname, '../replay/histories');
const HOUR = 3_600_000;

describe('sendInvoiceResponse branches (time-skipping server, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  async function run(
    outcomes: Array<SendInvoiceResponseAttemptResult['outcome']>,
    input: Partial<SendInvoiceResponseInput>,
    record?: string,
  ) {
    const attempts: Array<SendInvoiceResponseAttempt & { at: number }> = [];
    const events: Array<InvoiceResponseEventInput & { at: number }> = [];
    const activities = {
      sendInvoiceResponseAttempt: async (i: SendInvoiceResponseAttempt): Promise<SendInvoiceResponseAttemptResult> => {
        attempts.push({ ...i, at: await env().currentTimeMs() });
        const outcome = outcomes[attempts.length - 1] ?? 'failed';
        return {
          outcome,
          responseDocumentId: 'ir-1',
          to: 'iso6523-actorid-upis::0184:dk12345678',
          endpoint: 'https://c2.example.test/as4',
          messageId: 'm-1@invoice-gateway',
          ...(outcome === 'delivered' ? {} : { reason: 'HTTP 503' }),
        };
      },
      publishInvoiceResponseEvent: async (i: InvoiceResponseEventInput) => {
        events.push({ ...i, at: await env().currentTimeMs() });
        return { eventId: i.eventId };
      },
    };
    const args: SendInvoiceResponseInput = {
      tenantId: 'test',
      documentId: randomUUID(),
      statusCode: 'RE',
      reasons: [{ code: 'PRI', text: 'Unit price' }],
      peppolSchedule: { kind: 'table', delaysMs: [2 * HOUR, 6 * HOUR] },
      ...input,
    };
    const result = await withStubbedWorker(env(), activities, async (client, taskQueue) => {
      const workflowId = sendInvoiceResponseWorkflowId(args.tenantId, args.documentId, args.statusCode);
      const out = (await client.workflow.execute(SEND_INVOICE_RESPONSE_WORKFLOW, {
        taskQueue,
        workflowId,
        args: [args],
      })) as SendInvoiceResponseResult;
      if (process.env['RECORD_REPLAY_HISTORIES'] && record) {
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        writeFileSync(path.join(HISTORIES, `${record}.json`), `${historyToJSON(history)}\n`);
      }
      return out;
    });
    return { result, attempts, events, args };
  }

  it('publishes a retry per temporary failure, then InvoiceResponseSent once the receipt comes', async () => {
    const r = await run(['retryable', 'delivered'], {}, 'send-invoice-response-retried-then-sent');
    expect(r.result).toMatchObject({ outcome: 'sent', responseDocumentId: 'ir-1', attempts: 2 });
    expect(r.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    // The same response: the first attempt's time on both, the clarifications on both; the wait is the schedule's.
    expect(r.attempts[1]?.firstAttemptAt).toBe(r.attempts[0]?.firstAttemptAt);
    expect(r.attempts[1]!.at - r.attempts[0]!.at).toBeGreaterThanOrEqual(2 * HOUR);
    expect(r.attempts[1]).toMatchObject({ statusCode: 'RE', reasons: [{ code: 'PRI', text: 'Unit price' }] });
    expect(r.attempts[0]).not.toHaveProperty('peppolSchedule');
    expect(r.events.map((e) => [e.topic, e.attempt])).toEqual([
      ['InvoiceResponseSentRetry', 1],
      ['InvoiceResponseSent', 2],
    ]);
    const retry = r.events[0]!;
    expect(retry).toMatchObject({ documentId: r.args.documentId, responseDocumentId: 'ir-1', reason: 'HTTP 503' });
    expect(Date.parse(retry.nextAttemptOn!)).toBeGreaterThanOrEqual(retry.at + 2 * HOUR - 1000);
    expect(r.result.eventId).toBe(r.events[1]?.eventId);
  });

  it('publishes InvoiceResponseSentError at once when the peer refuses (no retry)', async () => {
    const r = await run(['failed'], { statusCode: 'AP', reasons: [] }, 'send-invoice-response-refused');
    expect(r.result).toMatchObject({ outcome: 'refused', attempts: 1, reason: 'HTTP 503' });
    expect(r.events).toEqual([
      expect.objectContaining({ topic: 'InvoiceResponseSentError', attempt: 1, reason: 'HTTP 503', statusCode: 'AP' }),
    ]);
  });

  it('publishes InvoiceResponseSentError when the schedule is exhausted, after a retry event per wait', async () => {
    const r = await run(['retryable', 'retryable', 'retryable'], {});
    expect(r.result).toMatchObject({ outcome: 'exhausted', attempts: 3 });
    expect(r.events.map((e) => e.topic)).toEqual([
      'InvoiceResponseSentRetry',
      'InvoiceResponseSentRetry',
      'InvoiceResponseSentError',
    ]);
    expect(r.events[2]?.reason).toMatch(/no delivery after 3 attempts: HTTP 503/);
    expect(r.result.eventId).toBe(r.events[2]?.eventId);
  });
});
