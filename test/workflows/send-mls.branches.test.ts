import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import {
  SEND_MLS_WORKFLOW,
  sendMlsWorkflowId,
  type MlsSentEventInput,
  type SendMlsAttempt,
  type SendMlsAttemptResult,
  type SendMlsInput,
  type SendMlsResult,
} from '../../workflows/contracts/send-mls';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * The branches of sendMessageLevelStatus with stubbed activities on the time-skipping server: a receipt publishes
 * MessageLevelStatusSent once; a temporary failure waits the Peppol schedule's delay and sends the same MLS again (the
 * first attempt's time travels); a refusal or the exhausted schedule ends the run without the event.
 */

const HISTORIES = path.resolve(__dirname, '../replay/histories');
const HOUR = 3_600_000;

describe('sendMessageLevelStatus branches (time-skipping server, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  async function run(outcomes: Array<SendMlsAttemptResult['outcome']>, input: Partial<SendMlsInput>, record?: string) {
    const attempts: Array<SendMlsAttempt & { at: number }> = [];
    const events: MlsSentEventInput[] = [];
    const activities = {
      sendMlsAttempt: async (i: SendMlsAttempt): Promise<SendMlsAttemptResult> => {
        attempts.push({ ...i, at: await env().currentTimeMs() });
        return {
          outcome: outcomes[attempts.length - 1] ?? 'failed',
          mlsDocumentId: 'mls-1',
          to: 'iso6523-actorid-upis::0242:000777',
          endpoint: 'https://c2.example.test/as4',
          messageId: 'm-1@invoice-gateway',
          ...(outcomes[attempts.length - 1] === 'delivered' ? {} : { reason: 'HTTP 503' }),
        };
      },
      publishMlsSent: async (i: MlsSentEventInput) => {
        events.push(i);
        return { eventId: i.eventId };
      },
    };
    const args: SendMlsInput = {
      tenantId: 'test',
      documentId: randomUUID(),
      responseCode: 'AP',
      requestedBy: 'api',
      peppolSchedule: { kind: 'table', delaysMs: [2 * HOUR, 6 * HOUR] },
      ...input,
    };
    const result = await withStubbedWorker(env(), activities, async (client, taskQueue) => {
      const workflowId = sendMlsWorkflowId(args.tenantId, args.documentId);
      const out = (await client.workflow.execute(SEND_MLS_WORKFLOW, {
        taskQueue,
        workflowId,
        args: [args],
      })) as SendMlsResult;
      if (process.env['RECORD_REPLAY_HISTORIES'] && record) {
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        writeFileSync(path.join(HISTORIES, `${record}.json`), `${historyToJSON(history)}\n`);
      }
      return out;
    });
    return { result, attempts, events, args };
  }

  it('publishes MessageLevelStatusSent once the receipt comes, after retries on the schedule', async () => {
    const r = await run(['retryable', 'delivered'], {}, 'send-mls-retried-then-sent');
    expect(r.result).toMatchObject({ outcome: 'sent', mlsDocumentId: 'mls-1', attempts: 2 });
    expect(r.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    // The same MLS: the first attempt's time on both; the wait is the schedule's.
    expect(r.attempts[1]?.firstAttemptAt).toBe(r.attempts[0]?.firstAttemptAt);
    expect(r.attempts[1]!.at - r.attempts[0]!.at).toBeGreaterThanOrEqual(2 * HOUR);
    expect(r.attempts[0]).toMatchObject({ tenantId: 'test', documentId: r.args.documentId, responseCode: 'AP' });
    expect(r.attempts[0]).not.toHaveProperty('peppolSchedule');
    expect(r.events).toEqual([
      expect.objectContaining({
        documentId: r.args.documentId,
        mlsDocumentId: 'mls-1',
        responseCode: 'AP',
        attempt: 2,
        to: 'iso6523-actorid-upis::0242:000777',
      }),
    ]);
    expect(r.result.eventId).toBe(r.events[0]?.eventId);
  });

  it('carries a rejection with its lines to every attempt', async () => {
    const lines = [{ reasonCode: 'BV' as const, description: 'x', ruleId: 'BR-CO-10' }];
    const r = await run(['duplicate'], { responseCode: 'RE', description: 'Rejected', lines });
    expect(r.result.outcome).toBe('sent');
    expect(r.attempts[0]).toMatchObject({ responseCode: 'RE', description: 'Rejected', lines });
    expect(r.events[0]).toMatchObject({ responseCode: 'RE', description: 'Rejected' });
  });

  it('ends without the event when the peer refuses, or when the schedule is exhausted', async () => {
    const refused = await run(['failed'], {}, 'send-mls-refused');
    expect(refused.result).toMatchObject({ outcome: 'refused', attempts: 1, reason: 'HTTP 503' });
    expect(refused.events).toEqual([]);
    const exhausted = await run(['retryable', 'retryable', 'retryable'], {});
    expect(exhausted.result).toMatchObject({ outcome: 'exhausted', attempts: 3 });
    expect(exhausted.events).toEqual([]);
  });
});
