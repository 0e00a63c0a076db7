import { Context } from '@temporalio/activity';
import { purgeStep, type RetentionDeps } from '../src/maintenance/retention';
import type { RetentionPeriods } from '../src/config/load-config';
import { GatewayError } from '../src/core/gateway-error';
import type { PurgeStepOutcome, PurgeStepRequest } from '../workflows/contracts/purge-records';

/** What the worker wires for retention; absent in a worker that does not purge (then the step says so). */
export interface RetentionActivityDeps {
  retention?: RetentionDeps & { enabled: boolean; periods: RetentionPeriods; batchSize: number };
}

/** purgeExpiredRecords' one activity: a bounded step (src/maintenance/retention.ts), its counts on the metrics. */
export function createRetentionActivities(deps: RetentionActivityDeps) {
  return {
    purgeRecordsStep: async (input: PurgeStepRequest): Promise<PurgeStepOutcome> => {
      const retention = deps.retention;
      if (!retention) throw new GatewayError('NOT_IMPLEMENTED', 'retention is not composed in this worker');
      if (!retention.enabled) {
        // A worker with RETENTION_ENABLED off deletes nothing, whoever keeps the schedule.
        retention.logger?.warn(
          { kind: input.kind },
          'retention is off in this worker (RETENTION_ENABLED): nothing deleted',
        );
        return { kind: input.kind, scanned: 0, purged: 0, blobs: 0, kept: {}, resumed: 0 };
      }
      const out = await purgeStep(retention, retention, { ...input, asOf: new Date(input.asOf) });
      const meter = Context.current().metricMeter;
      meter
        .createCounter('gateway_worker_retention_purged', 'records', 'Records deleted by retention, by kind')
        .add(out.purged, { kind: out.kind });
      const kept = meter.createCounter(
        'gateway_worker_retention_kept',
        'records',
        'Records past the first cut-off that retention kept, by kind and reason (held, not-final, running...)',
      );
      for (const [reason, n] of Object.entries(out.kept)) kept.add(n, { kind: out.kind, reason });
      return { ...out, kept: out.kept };
    },
  };
}
