/**
 * The composition of retention: the worker keeps the retention schedule (a Temporal Schedule starting
 * purgeExpiredRecords) and gives the purge its storage and Temporal's view of open runs; the admin CLI places and
 * releases legal holds.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../config/load-config';
import { GatewayError } from '../core/gateway-error';
import type { Logger } from '../observability/logger';
import { listHolds, placeHold, releaseHold } from '../maintenance/legal-hold';
import type { OpenRunLookup, RetentionDeps } from '../maintenance/retention';
import { RetentionRepository } from '../storage/retention/retention.repository';
import { documentKey } from '../storage/document.repository';
import { DocumentIdAttribute, TenantIdAttribute } from '../../workflows/contracts/search-attributes';
import {
  PURGE_RECORDS_WORKFLOW,
  PURGE_RECORDS_WORKFLOW_ID,
  RETENTION_SCHEDULE_ID,
} from '../../workflows/contracts/purge-records';
import type { purgeExpiredRecords } from '../../workflows/purge-records.workflow';
import type { Core } from './compose';

/** A document id safe inside a visibility query's string literal (anything else is treated as running: kept). */
const QUERYABLE = /^[A-Za-z0-9._:@+\-/]{1,200}$/;

/**
 * Open runs of documents as Temporal's visibility sees them: one query per page of documents, over the TenantId and
 * DocumentId search attributes document runs carry. A document whose id cannot be put in a query is reported open.
 */
export function temporalOpenRuns(client: Client): OpenRunLookup {
  return {
    async openDocumentRuns(documents) {
      const open = new Set<string>();
      const ids = new Set<string>();
      for (const d of documents) {
        if (QUERYABLE.test(d.documentId) && QUERYABLE.test(d.tenantId)) ids.add(d.documentId);
        else open.add(documentKey(d.tenantId, d.documentId));
      }
      if (ids.size === 0) return open;
      const query = `ExecutionStatus = 'Running' AND DocumentId IN (${[...ids].map((id) => `'${id}'`).join(', ')})`;
      for await (const run of client.workflow.list({ query })) {
        const tenantId = run.typedSearchAttributes.get(TenantIdAttribute);
        const documentId = run.typedSearchAttributes.get(DocumentIdAttribute);
        if (tenantId !== undefined && documentId !== undefined) open.add(documentKey(tenantId, documentId));
      }
      return open;
    },
  };
}

/** The purge's parts over the worker's storage and client. */
export function composeRetention(
  config: Readonly<Config>,
  core: Pick<Core, 'db' | 'logger'>,
  client: Client,
): RetentionDeps & { enabled: boolean; periods: Config['retention']['periodsMs']; batchSize: number } {
  return {
    enabled: config.retention.enabled,
    repository: new RetentionRepository(core.db.models, core.db.blobs),
    runs: temporalOpenRuns(client),
    logger: core.logger,
    periods: config.retention.periodsMs,
    batchSize: config.retention.batchSize,
  };
}

/**
 * Creates the retention schedule, or brings an existing one to this worker's settings (interval, task queue) and
 * unpauses it. Every worker with retention on asks at start: the schedule id keeps one per namespace. Runs never
 * overlap (a tick while one runs is skipped). A worker with retention off leaves the schedule alone, and its purge
 * steps delete nothing (so workers started with different settings never fight over the schedule).
 */
export async function ensureRetentionSchedule(
  client: Client,
  settings: { enabled: boolean; intervalMs: number; taskQueue: string },
): Promise<'created' | 'updated' | 'off'> {
  if (!settings.enabled) return 'off';
  const handle = client.schedule.getHandle(RETENTION_SCHEDULE_ID);
  const spec = { intervals: [{ every: settings.intervalMs }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: PURGE_RECORDS_WORKFLOW,
    workflowId: PURGE_RECORDS_WORKFLOW_ID,
    taskQueue: settings.taskQueue,
    args: [{}] as Parameters<typeof purgeExpiredRecords>,
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: settings.intervalMs };
  try {
    await client.schedule.create<typeof purgeExpiredRecords>({
      scheduleId: RETENTION_SCHEDULE_ID,
      spec,
      action,
      policies,
    });
    return 'created';
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
  }
  await handle.update<typeof purgeExpiredRecords>((previous) => ({
    ...previous,
    spec,
    action,
    policies,
    state: { ...previous.state, paused: false },
  }));
  return 'updated';
}

/** Starts the schedule's upkeep in the background of a worker's start (a failure is logged, never fatal). */
export function keepRetentionSchedule(client: Client, config: Readonly<Config>, taskQueue: string, logger: Logger) {
  ensureRetentionSchedule(client, {
    enabled: config.retention.enabled,
    intervalMs: config.retention.intervalMs,
    taskQueue,
  }).then(
    (state) => logger.info({ state, intervalMs: config.retention.intervalMs }, 'retention schedule'),
    (e: unknown) => logger.error({ err: e }, 'the retention schedule could not be set up'),
  );
}

/** `admin document hold|release|holds`: legal holds on single documents. */
export async function runLegalHoldCommand(
  core: Core,
  verb: string | undefined,
  options: { tenantId?: string | undefined; documentId?: string | undefined; reason?: string | undefined; by: string },
): Promise<unknown> {
  const retention = new RetentionRepository(core.db.models, core.db.blobs);
  const deps = { documents: core.documents, retention, blobs: core.db.blobs };
  if (verb === 'holds') return listHolds(deps, options.tenantId);
  const { tenantId, documentId } = options;
  if (!tenantId || !documentId)
    throw new GatewayError('BAD_REQUEST', `document ${verb ?? ''} needs the tenant and the document id`);
  switch (verb) {
    case 'hold':
      return placeHold(deps, { tenantId, documentId, reason: options.reason ?? '', by: options.by });
    case 'release':
      return releaseHold(deps, { tenantId, documentId });
    default:
      throw new GatewayError('BAD_REQUEST', 'legal hold commands: hold, release, holds');
  }
}
