import { ActivityFailure, continueAsNew, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { NetworkReportKind, PeppolReportingInput, PreparedNetworkReport } from './contracts/peppol-reporting';

const HOUR = 3_600_000;
const KINDS: readonly NetworkReportKind[] = ['tsr', 'eusr'];
/** Reports go out a little after midnight UTC on the 1st: the month's last messages have been recorded by then. */
const START_OFFSET_MS = HOUR;

const pad = (n: number): string => String(n).padStart(2, '0');

/** The month before the one `at` falls in (UTC), `YYYY-MM`. */
export function monthBefore(at: Date): string {
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1));
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`;
}

/** The end of the sending window of the month `at` falls in: the end of day `lastDay` (UTC). */
function windowEnd(at: Date, lastDay: number): number {
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), lastDay + 1);
}

/** When the next window opens: the 1st of the next month, plus the offset. */
function nextWindow(at: Date): number {
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1) + START_OFFSET_MS;
}

/**
 * Sends one report of `month` until it is delivered or the window closes. Generation happens once (a keyed insert);
 * a report that breaks the official rules is never sent: the step fails without retry and the report is given up,
 * logged. Returns whether the report was delivered.
 */
async function reportOne(month: string, kind: NetworkReportKind, deadline: number, retryEveryMs: number) {
  // Our own failures (database, a worker without the AP key) are retried, but never past the window.
  const steps = proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    scheduleToCloseTimeout: Math.max(60_000, deadline - Date.now()),
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  });
  let prepared: PreparedNetworkReport;
  try {
    prepared = await steps.prepareNetworkReport({ month, kind });
  } catch (e) {
    if (!(e instanceof ActivityFailure)) throw e;
    log.error('Peppol network report not generated; it is not sent', { month, kind, error: e.cause?.message });
    return false;
  }
  if (prepared.delivered) return true;
  let attempt = prepared.attempts;
  for (;;) {
    attempt += 1;
    let outcome: string;
    let reason: string | undefined;
    try {
      const out = await steps.sendNetworkReportAttempt({ month, kind, attempt });
      outcome = out.outcome;
      reason = out.reason;
    } catch (e) {
      // The run outlives any one failure: an attempt that could not be made is one more to make.
      if (!(e instanceof ActivityFailure)) throw e;
      outcome = 'error';
      reason = e.cause?.message ?? e.message;
    }
    if (outcome === 'delivered' || outcome === 'duplicate') return true;
    log.warn('Peppol network report not delivered', { month, kind, attempt, outcome, reason });
    if (Date.now() + retryEveryMs >= deadline) {
      log.error('Peppol network report window closed before delivery', { month, kind, attempts: attempt });
      return false;
    }
    await sleep(retryEveryMs);
  }
}

/**
 * One run per gateway: in the first days of each month (UTC, up to `lastDay`, 15 by the reporting policy) the TSR and
 * the EUSR of the previous month are generated and sent, retried every `retryEveryMs` until delivered or the window
 * closes; then the run sleeps until the next month's window and continues as new. Months already settled are not sent
 * again; started after the window, it waits for the next one.
 */
export async function peppolReporting(input: PeppolReportingInput = {}): Promise<void> {
  const retryEveryMs = input.retryEveryMs ?? HOUR;
  const lastDay = input.lastDay ?? 15;
  const settled = [...(input.settled ?? [])];
  const now = new Date(Date.now());
  const month = monthBefore(now);
  if (now.getUTCDate() <= lastDay && !settled.includes(month)) {
    const deadline = windowEnd(now, lastDay);
    for (const kind of KINDS) await reportOne(month, kind, deadline, retryEveryMs);
    settled.push(month);
  }
  if (input.untilMonth !== undefined && settled.includes(input.untilMonth)) return;
  await sleep(Math.max(0, nextWindow(now) - Date.now()));
  await continueAsNew<typeof peppolReporting>({
    ...input,
    retryEveryMs,
    lastDay,
    settled: settled.slice(-3),
  });
}
