import { continueAsNew, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  RETENTION_KINDS,
  type PurgeRecordsInput,
  type PurgeRecordsResult,
  type PurgeTotals,
  type RetentionKind,
} from './contracts/purge-records';

const steps = proxyActivities<Pick<Activities, 'purgeRecordsStep'>>({
  startToCloseTimeout: '10 minutes',
  // Our own faults (the database, Temporal's visibility) are retried a while; a run that gives up leaves the rest to
  // the schedule's next tick (it skips while one runs).
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 10 },
});

/**
 * A purge: every kind of record (RETENTION_KINDS) in turn, one bounded page per step, until each kind's scan reaches
 * its cut-off. All steps judge records as of the run's first start (`asOf`), so a purge ends; it continues as new
 * every `maxStepsPerRun` steps to keep its history small. Progress is logged per step (the activity) and per purge.
 */
export async function purgeExpiredRecords(input: PurgeRecordsInput = {}): Promise<PurgeRecordsResult> {
  const asOf = input.asOf ?? new Date(Date.now()).toISOString();
  const maxSteps = input.maxStepsPerRun ?? 100;
  const totals: Partial<Record<RetentionKind, PurgeTotals>> = { ...input.totals };
  let kindIndex = input.kindIndex ?? 0;
  let cursor = input.cursor;
  let step = 0;
  while (kindIndex < RETENTION_KINDS.length) {
    if (step >= maxSteps) {
      return continueAsNew<typeof purgeExpiredRecords>({
        asOf,
        maxStepsPerRun: maxSteps,
        kindIndex,
        ...(cursor ? { cursor } : {}),
        totals,
      });
    }
    const kind = RETENTION_KINDS[kindIndex]!;
    const out = await steps.purgeRecordsStep({
      kind,
      asOf,
      ...(cursor ? { cursor } : {}),
      stepId: `${workflowInfo().runId}:${step}`,
    });
    step += 1;
    const t = totals[kind] ?? { scanned: 0, purged: 0, kept: 0 };
    totals[kind] = {
      scanned: t.scanned + out.scanned,
      purged: t.purged + out.purged,
      kept: t.kept + Object.values(out.kept).reduce((a, b) => a + b, 0),
    };
    if (out.next) cursor = out.next;
    else {
      kindIndex += 1;
      cursor = undefined;
    }
  }
  log.info('retention purge done', { asOf, totals });
  return { asOf, totals };
}
