import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import {
  PEPPOL_REPORTING_WORKFLOW,
  type NetworkReportAttempt,
  type NetworkReportAttemptResult,
  type NetworkReportStep,
  type PeppolReportingInput,
  type PreparedNetworkReport,
} from '../../workflows/contracts/peppol-reporting';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * The schedule of peppolReporting with stubbed activities on the time-skipping server: started after the sending
 * window it waits for the 1st of the next month (UTC), then generates and sends the previous month's TSR and EUSR,
 * retrying a report that is not delivered until the 15th ends; a report the rules refuse is never sent; a delivered
 * one is not sent again; the next month follows after continue-as-new.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const pad = (n: number) => String(n).padStart(2, '0');
const monthOf = (ms: number) => {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`;
};

describe('peppolReporting schedule (time-skipping server, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  /** Moves the server's clock to the 20th of the current month (UTC, noon): after the window. Returns that month. */
  async function toThe20th(): Promise<{ month: string; nextMonth: string; firstOfNext: number }> {
    const now = await env().currentTimeMs();
    const d = new Date(now);
    let target = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 20, 12);
    if (target <= now) target = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 20, 12);
    await env().sleep(target - now);
    const t = new Date(target);
    const firstOfNext = Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1);
    return { month: monthOf(target), nextMonth: monthOf(firstOfNext), firstOfNext };
  }

  async function run(
    input: PeppolReportingInput,
    behave: {
      prepare?: (s: NetworkReportStep) => PreparedNetworkReport;
      send?: (a: NetworkReportAttempt, n: number) => NetworkReportAttemptResult['outcome'] | 'throw';
    } = {},
  ) {
    const prepared: Array<NetworkReportStep & { at: number }> = [];
    const attempts: Array<NetworkReportAttempt & { at: number }> = [];
    const activities = {
      prepareNetworkReport: async (s: NetworkReportStep): Promise<PreparedNetworkReport> => {
        prepared.push({ ...s, at: await env().currentTimeMs() });
        return (
          behave.prepare?.(s) ?? {
            documentId: `peppol-${s.kind}-${s.month}`,
            created: true,
            delivered: false,
            attempts: 0,
          }
        );
      },
      sendNetworkReportAttempt: async (a: NetworkReportAttempt): Promise<NetworkReportAttemptResult> => {
        attempts.push({ ...a, at: await env().currentTimeMs() });
        const n = attempts.filter((x) => x.kind === a.kind && x.month === a.month).length;
        const outcome = behave.send?.(a, n) ?? 'delivered';
        if (outcome === 'throw') throw ApplicationFailure.nonRetryable('report not generated', 'DOCUMENT_NOT_FOUND');
        return {
          outcome,
          to: 'iso6523-actorid-upis::9925:be0848934496',
          endpoint: 'https://openpeppol.example.test/as4',
          messageId: `m-${a.kind}-${n}@invoice-gateway`,
        };
      },
    };
    await withStubbedWorker(env(), activities, (client, taskQueue) =>
      client.workflow.execute(PEPPOL_REPORTING_WORKFLOW, {
        taskQueue,
        workflowId: `peppol-reporting-test-${randomUUID()}`,
        args: [input],
      }),
    );
    return { prepared, attempts };
  }

  it('waits for the 1st, then sends both reports of the previous month; a retryable one again an hour later', async () => {
    const { month, firstOfNext } = await toThe20th();
    const r = await run(
      { untilMonth: month },
      { send: (a, n) => (a.kind === 'tsr' && n < 3 ? 'retryable' : 'delivered') },
    );
    expect(r.prepared.map((p) => `${p.kind} ${p.month}`)).toEqual([`tsr ${month}`, `eusr ${month}`]);
    expect(r.prepared[0]!.at).toBeGreaterThanOrEqual(firstOfNext);
    expect(r.prepared[0]!.at).toBeLessThan(firstOfNext + 2 * HOUR);
    const tsr = r.attempts.filter((a) => a.kind === 'tsr');
    expect(tsr.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(tsr[1]!.at - tsr[0]!.at).toBeGreaterThanOrEqual(HOUR);
    expect(tsr[1]!.at - tsr[0]!.at).toBeLessThan(HOUR + 60_000);
    expect(r.attempts.filter((a) => a.kind === 'eusr').map((a) => a.attempt)).toEqual([1]);
  });

  it('gives a report up when the 15th ends: no attempt after the window', async () => {
    const { month, firstOfNext } = await toThe20th();
    const r = await run({ untilMonth: month, retryEveryMs: DAY }, { send: () => 'retryable' });
    const tsr = r.attempts.filter((a) => a.kind === 'tsr');
    const windowEnd = firstOfNext + 15 * DAY;
    expect(tsr.length).toBeGreaterThanOrEqual(14);
    expect(tsr.length).toBeLessThanOrEqual(15);
    expect(Math.max(...r.attempts.map((a) => a.at))).toBeLessThan(windowEnd);
    // The EUSR is tried once the TSR's window is spent: too late for a retry.
    expect(r.attempts.filter((a) => a.kind === 'eusr')).toHaveLength(1);
  });

  it('outlives an attempt that fails with an error: the run stays and tries again', async () => {
    const { month } = await toThe20th();
    const r = await run(
      { untilMonth: month },
      { send: (a, n) => (a.kind === 'tsr' && n === 1 ? 'throw' : 'delivered') },
    );
    expect(r.attempts.map((a) => `${a.kind} ${a.attempt}`)).toEqual(['tsr 1', 'tsr 2', 'eusr 1']);
  });

  it('never sends a report the official rules refuse; the other report still goes', async () => {
    const { month } = await toThe20th();
    const r = await run(
      { untilMonth: month },
      {
        prepare: (s) => {
          if (s.kind === 'tsr')
            throw ApplicationFailure.nonRetryable('the TSR breaks the official rules [SCH-TSR-09]', 'UNPROCESSABLE');
          return { documentId: `peppol-eusr-${s.month}`, created: true, delivered: false, attempts: 0 };
        },
      },
    );
    expect(r.prepared.filter((p) => p.kind === 'tsr')).toHaveLength(1);
    expect(r.attempts.map((a) => a.kind)).toEqual(['eusr']);
  });

  it('does not send a delivered report again, and continues with the next month', async () => {
    const { month, nextMonth } = await toThe20th();
    const r = await run(
      { untilMonth: nextMonth },
      {
        prepare: (s) => ({
          documentId: `peppol-${s.kind}-${s.month}`,
          created: s.month !== month,
          delivered: s.month === month && s.kind === 'tsr',
          attempts: s.month === month && s.kind === 'tsr' ? 1 : 0,
        }),
      },
    );
    expect(r.prepared.map((p) => `${p.kind} ${p.month}`)).toEqual([
      `tsr ${month}`,
      `eusr ${month}`,
      `tsr ${nextMonth}`,
      `eusr ${nextMonth}`,
    ]);
    expect(r.attempts.map((a) => `${a.kind} ${a.month} ${a.attempt}`)).toEqual([
      `eusr ${month} 1`,
      `tsr ${nextMonth} 1`,
      `eusr ${nextMonth} 1`,
    ]);
  });
});
