import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import {
  REPORT_TAX_WORKFLOW,
  TAX_ACKNOWLEDGEMENT_SIGNAL,
  reportTaxWorkflowId,
  type PreparedTaxReport,
  type ReportTaxInput,
  type ReportTaxResult,
  type TaxAcknowledgement,
  type TaxReportAttempt,
  type TaxReportAttemptResult,
  type TaxReportEventInput,
} from '../../workflows/contracts/report-tax';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * The branches of reportTax with stubbed activities on the time-skipping server: the plan step's report is
 * submitted on the Peppol schedule (a retry event per temporary failure), its receipt is recorded without an event,
 * and the authority's MLS (a signal from the receiving run) ends it: AP / AB in TaxReportSent's outcome `accepted`,
 * RE in `rejected`. No answer in time, a refusal, a report that cannot be made end in TaxReportError; a report not
 * required ends quietly. Only the authority the report went to may answer it.
 */

const HOUR = 3_600_000;
const AUTHORITY = '000777-taxsim.be';
const AUTHORITY_SPID = 'iso6523-actorid-upis::0242:000777';

const REPORT: PreparedTaxReport = {
  kind: 'report',
  role: 'C2',
  country: 'BE',
  authority: AUTHORITY,
  reportDocumentId: 'tdd-1',
  invoiceUuid: '0d7b3f5c-5d2a-5b5e-9f1e-2c9a1b7c8d6e',
  acknowledgedBy: AUTHORITY_SPID,
};

type Answer = TaxAcknowledgement | undefined;

describe('reportTax branches (time-skipping server, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  async function run(opts: {
    prepared?: PreparedTaxReport;
    outcomes?: Array<TaxReportAttemptResult['outcome']>;
    /** MLS signals sent by the (stubbed) authority once an attempt delivered. */
    answers?: Answer[];
  }) {
    const attempts: Array<TaxReportAttempt & { at: number }> = [];
    const events: Array<TaxReportEventInput & { at: number }> = [];
    const input: ReportTaxInput = {
      tenantId: 'test',
      documentId: randomUUID(),
      direction: 'outbound',
      acknowledgementTimeoutMs: 12 * HOUR,
      peppolSchedule: { kind: 'table', delaysMs: [2 * HOUR, 6 * HOUR] },
    };
    const workflowId = reportTaxWorkflowId(input.tenantId, input.documentId);
    let client: Client | undefined;
    const activities = {
      prepareTaxReport: async () => opts.prepared ?? REPORT,
      submitTaxReportAttempt: async (i: TaxReportAttempt): Promise<TaxReportAttemptResult> => {
        attempts.push({ ...i, at: await env().currentTimeMs() });
        const outcome = opts.outcomes?.[attempts.length - 1] ?? 'delivered';
        if (outcome === 'delivered')
          for (const a of opts.answers ?? [])
            if (a) await client!.workflow.getHandle(workflowId).signal(TAX_ACKNOWLEDGEMENT_SIGNAL, a);
        return {
          outcome,
          to: `iso6523-actorid-upis::0242:${AUTHORITY}`,
          endpoint: 'https://c5.example.test/as4',
          messageId: 'tdd-m-1@invoice-gateway',
          ...(outcome === 'delivered' ? {} : { reason: outcome === 'failed' ? 'HTTP 403' : 'HTTP 503' }),
        };
      },
      publishTaxReportEvent: async (i: TaxReportEventInput) => {
        events.push({ ...i, at: await env().currentTimeMs() });
        return { eventId: i.outcome === 'submitted' ? null : i.eventId };
      },
    };
    const result = await withStubbedWorker(env(), activities, async (c, taskQueue) => {
      client = c;
      return (await c.workflow.execute(REPORT_TAX_WORKFLOW, {
        taskQueue,
        workflowId,
        args: [input],
      })) as ReportTaxResult;
    });
    return { result, attempts, events };
  }

  const ack = (responseCode: string, sender = AUTHORITY_SPID, reason?: string): TaxAcknowledgement => ({
    mlsDocumentId: randomUUID(),
    sender,
    responseCode,
    ...(reason ? { reason } : {}),
  });

  it('records the receipt, then ends accepted on the authority’s MLS AP', async () => {
    const answer = ack('AP');
    const r = await run({ answers: [answer] });
    expect(r.result).toEqual({ outcome: 'accepted', reportDocumentId: 'tdd-1', attempts: 1, statusCode: 'AP' });
    expect(r.events.map((e) => e.outcome)).toEqual(['submitted', 'accepted']);
    expect(r.events[1]).toMatchObject({ statusCode: 'AP', mlsDocumentId: answer.mlsDocumentId, report: REPORT });
    expect(r.attempts[0]).toMatchObject({ attempt: 1, report: REPORT });
  });

  it('an MLS RE ends it rejected with the authority’s findings', async () => {
    const r = await run({ answers: [ack('RE', AUTHORITY_SPID.toUpperCase(), 'BV [ibr-tdd-17] bad id')] });
    expect(r.result).toMatchObject({ outcome: 'rejected', statusCode: 'RE', reason: 'BV [ibr-tdd-17] bad id' });
    expect(r.events.map((e) => [e.outcome, e.statusCode])).toEqual([
      ['submitted', undefined],
      ['rejected', 'RE'],
    ]);
  });

  it('ignores an MLS from anyone but the authority it reported to, and fails when no answer comes in time', async () => {
    const spoofed = ack('AP', 'iso6523-actorid-upis::0242:999999');
    const r = await run({ answers: [spoofed] });
    expect(r.result.outcome).toBe('failed');
    expect(r.result.reason).toMatch(/did not acknowledge the report within 720 min/);
    const [submitted, failed] = r.events;
    expect(r.events.map((e) => e.outcome)).toEqual(['submitted', 'failed']);
    // The wait is the configured one, on the server's clock.
    expect(failed!.at - submitted!.at).toBeGreaterThanOrEqual(12 * HOUR);
  });

  it('retries a temporary failure on the Peppol schedule with a retry event, then waits for the answer', async () => {
    const r = await run({ outcomes: ['retryable', 'delivered'], answers: [ack('AB')] });
    expect(r.result).toMatchObject({ outcome: 'accepted', attempts: 2, statusCode: 'AB' });
    expect(r.events.map((e) => e.outcome)).toEqual(['retry', 'submitted', 'accepted']);
    expect(r.events[0]).toMatchObject({ attempt: 1, reason: 'HTTP 503' });
    expect(r.events[0]!.nextAttemptOn).toBeDefined();
    expect(r.attempts[1]!.firstAttemptAt).toBe(r.attempts[0]!.firstAttemptAt);
    expect(r.attempts[1]!.at - r.attempts[0]!.at).toBeGreaterThanOrEqual(2 * HOUR);
  });

  it('a refused submission ends failed at once, without waiting for an answer', async () => {
    const r = await run({ outcomes: ['failed'] });
    expect(r.result).toMatchObject({ outcome: 'failed', attempts: 1, reason: 'HTTP 403' });
    expect(r.events.map((e) => [e.outcome, e.reason])).toEqual([['failed', 'HTTP 403']]);
  });

  it('the exhausted schedule ends failed', async () => {
    const r = await run({ outcomes: ['retryable', 'retryable', 'retryable'] });
    expect(r.result).toMatchObject({ outcome: 'failed', attempts: 3 });
    expect(r.events.map((e) => e.outcome)).toEqual(['retry', 'retry', 'failed']);
    expect(r.events[2]!.reason).toMatch(/no delivery after 3 attempts/);
  });

  it('a report that cannot be made is announced as refused and nothing is sent', async () => {
    const prepared: PreparedTaxReport = { kind: 'refused', role: 'C3', country: 'DK', reason: 'BT-110 missing' };
    const r = await run({ prepared });
    expect(r.result).toEqual({ outcome: 'refused', attempts: 0, reason: 'BT-110 missing' });
    expect(r.attempts).toHaveLength(0);
    expect(r.events.map((e) => [e.outcome, e.reason])).toEqual([['refused', 'BT-110 missing']]);
  });

  it('a report not required ends quietly (no event, no submission)', async () => {
    const prepared: PreparedTaxReport = { kind: 'skipped', role: 'C2', reason: 'no tax authority is configured' };
    const r = await run({ prepared });
    expect(r.result).toEqual({ outcome: 'skipped', attempts: 0, reason: 'no tax authority is configured' });
    expect(r.attempts).toHaveLength(0);
    expect(r.events).toHaveLength(0);
  });
});
