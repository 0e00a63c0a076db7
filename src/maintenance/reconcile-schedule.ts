import { Gauge, type Registry } from 'prom-client';
import type { Models } from '../storage/models';
import type { BlobStore } from '../storage/blob-store';
import { isDuplicateKeyError } from '../storage/connection';
import type { Logger } from '../observability/logger';
import { reconcileStorage, type FindingKind, type ReconcileCursor, type SendRunLookup } from './reconcile';

export interface ReconcileScheduleOptions {
  intervalMs: number;
  minAgeMs: number;
  windowMs: number;
  limit: number;
}

const KINDS: FindingKind[] = [
  'state-behind-workflow',
  'workflow-ended-without-outcome',
  'intake-incomplete',
  'record-without-blob',
  'blob-without-record',
  'chunks-without-blob',
];

/**
 * Runs storage reconciliation every interval in one process of the deployment. Each interval is a slot; the process
 * whose insert of the slot's run record succeeds runs it (a unique key, so two never run one slot), and writes the
 * cursor it reached into a record of its own that the next slot's runner reads. Findings go to the log and to the
 * `<prefix>reconcile_findings{kind}` gauge (what the last run found, repaired or not).
 */
export function scheduleReconcile(
  deps: { models: Models; blobs: BlobStore; runs: SendRunLookup; logger: Logger; metrics?: Registry; prefix?: string },
  options: ReconcileScheduleOptions,
): { runOnce(now?: Date): Promise<boolean>; stop(): void } {
  const gauge = deps.metrics
    ? new Gauge({
        name: `${deps.prefix ?? ''}reconcile_findings`,
        help: 'What the last storage reconciliation found, by kind (repaired or reported)',
        labelNames: ['kind'],
        registers: [deps.metrics],
      })
    : undefined;
  const runs = deps.models.Document.db.collection<{ _id: string; at: Date; next?: ReconcileCursor }>('reconcileruns');

  async function runOnce(now = new Date()): Promise<boolean> {
    const slot = Math.floor(now.getTime() / options.intervalMs);
    try {
      await runs.insertOne({ _id: `slot:${slot}`, at: now });
    } catch (e) {
      if (isDuplicateKeyError(e)) return false;
      throw e;
    }
    const previous = await runs
      .find({ _id: { $regex: /^done:/ } })
      .sort({ at: -1 })
      .limit(1)
      .next();
    const report = await reconcileStorage(deps, {
      ...options,
      now,
      ...(previous?.next ? { cursor: previous.next } : {}),
    });
    await runs.insertOne({ _id: `done:${slot}`, at: now, next: report.next });
    // Runs older than a day are history nobody reads.
    await runs.deleteMany({ at: { $lt: new Date(now.getTime() - 86_400_000) } });
    for (const kind of KINDS) gauge?.set({ kind }, report.findings.filter((f) => f.kind === kind).length);
    deps.logger.info({ checked: report.checked, findings: report.findings.length }, 'storage reconciliation done');
    return true;
  }

  let stopped = false;
  const timer = setInterval(() => {
    if (stopped) return;
    runOnce().catch((e: unknown) => deps.logger.error({ err: e }, 'storage reconciliation failed'));
  }, options.intervalMs);
  timer.unref();
  return {
    runOnce,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
