import type { Models, DocumentHistoryDoc, DocumentDoc } from '../storage/models';
import type { BlobStore } from '../storage/blob-store';
import { describe as describeRecord, DocumentRepository } from '../storage/document.repository';
import { HistoryStep } from '../core/document-states';
import type { Logger } from '../observability/logger';

/** What reconciliation needs to know of a sales invoice's workflow. */
export type SendRunStatus =
  | { status: 'not-found' }
  | { status: 'running' }
  | { status: 'completed'; state: string }
  | { status: 'failed' | 'terminated' | 'canceled' | 'timed-out' };

export interface SendRunLookup {
  describeSendInvoice(tenantId: string, documentId: string): Promise<SendRunStatus>;
}

export interface ReconcileOptions {
  now?: Date;
  /** Records and blobs younger than this are left alone: their upload or step may still be running. */
  minAgeMs: number;
  /** How far back records are checked against their workflows (a run's longest life, retries included). */
  windowMs: number;
  /** At most this many records, blobs and chunks are looked at per kind and run. */
  limit: number;
  /** Report only; change nothing. */
  dryRun?: boolean;
  /** Where the blob pages go on from (the previous run's `next`). */
  cursor?: ReconcileCursor;
}

export interface ReconcileCursor {
  /** Creation time (ISO) of the last record looked at. */
  record?: string | undefined;
  blob?: string | undefined;
  chunk?: string | undefined;
}

export interface Finding {
  kind: FindingKind;
  id: string;
  detail: string;
  repaired: boolean;
}

export type FindingKind =
  /** The workflow ended with a final state the record's history lacks: the entry is written from its result. */
  | 'state-behind-workflow'
  /** The workflow ended without a final state (failed, terminated, …): reported, an operator decides. */
  | 'workflow-ended-without-outcome'
  /** A record whose upload was never answered 200 and whose workflow never started: reported (its bytes stay). */
  | 'intake-incomplete'
  /** A record whose bytes are missing: reported (nothing can bring them back). */
  | 'record-without-blob'
  /** Stored bytes no record refers to, older than the minimum age: removed. */
  | 'blob-without-record'
  /** Chunks of an upload that died before its file record was written: removed. */
  | 'chunks-without-blob';

export interface ReconcileReport {
  findings: Finding[];
  checked: { records: number; blobs: number; chunks: number };
  next: ReconcileCursor;
}

const FINAL_KEY_OF_STATE: Record<string, string> = {
  delivered: HistoryStep.delivered.key,
  InvoiceSentError: HistoryStep.sendError.key,
};

/**
 * Finds what storage and the workflows disagree on, repairs what is safe and reports the rest. Safe repairs are
 * inserts and removals of things nothing can still use: a final history entry copied from a completed workflow's
 * result (an insert under the step's key, so it can never overwrite what the workflow wrote), and bytes or chunks that
 * no record refers to and that are older than any upload or step still running. Bytes a record refers to are never
 * removed, whatever the record's state.
 */
export async function reconcileStorage(
  deps: { models: Models; blobs: BlobStore; runs: SendRunLookup; logger?: Logger },
  options: ReconcileOptions,
): Promise<ReconcileReport> {
  const now = options.now ?? new Date();
  const settled = new Date(now.getTime() - options.minAgeMs);
  const findings: Finding[] = [];
  const found = (f: Finding) => {
    findings.push(f);
    deps.logger?.warn({ reconcile: f }, `storage reconciliation: ${f.kind} ${f.id}`);
  };

  // Sales invoices in the window whose history does not end: compare with their workflows.
  const records = await deps.models.Document.find({
    direction: 'outbound',
    createdAt: {
      ...(options.cursor?.record ? { $gt: new Date(options.cursor.record) } : {}),
      $gte: new Date(now.getTime() - options.windowMs),
      $lt: settled,
    },
  })
    .sort({ createdAt: 1 })
    .limit(options.limit)
    .lean<DocumentDoc[]>()
    .exec();
  const entries = records.length
    ? await deps.models.DocumentHistory.find({ docKey: { $in: records.map((r) => r._id) } })
        .lean<DocumentHistoryDoc[]>()
        .exec()
    : [];
  const byRecord = new Map<string, DocumentHistoryDoc[]>();
  for (const e of entries) byRecord.set(e.docKey, [...(byRecord.get(e.docKey) ?? []), e]);
  for (const stored of records) {
    const record = describeRecord(stored, byRecord.get(stored._id) ?? []);
    if (record.final) continue;
    const run = await deps.runs.describeSendInvoice(record.tenantId, record.documentId);
    if (run.status === 'running') continue;
    if (run.status === 'not-found') {
      if (!record.accepted) {
        found({
          kind: 'intake-incomplete',
          id: record._id,
          detail: `uploaded ${record.createdAt.toISOString()}, never answered 200 and never started`,
          repaired: false,
        });
      } else {
        found({
          kind: 'workflow-ended-without-outcome',
          id: record._id,
          detail: 'accepted, but no workflow',
          repaired: false,
        });
      }
      continue;
    }
    if (run.status === 'completed' && FINAL_KEY_OF_STATE[run.state]) {
      let repaired = false;
      if (!options.dryRun) {
        // The step's own keyed insert: a final entry the workflow wrote meanwhile keeps it, nothing is overwritten.
        await new DocumentRepository(deps.models).appendHistory(record.tenantId, record.documentId, {
          state: run.state,
          key: FINAL_KEY_OF_STATE[run.state]!,
          detail: 'recorded from the workflow result by storage reconciliation',
        });
        repaired = true;
      }
      found({
        kind: 'state-behind-workflow',
        id: record._id,
        detail: `workflow ended ${run.state}, record ${record.state}`,
        repaired,
      });
      continue;
    }
    found({
      kind: 'workflow-ended-without-outcome',
      id: record._id,
      detail:
        `workflow ${run.status}${run.status === 'completed' ? ` with state ${run.state}` : ''}, ` +
        `record ${record.state}`,
      repaired: false,
    });
  }

  // Records whose bytes are gone (the same records: a page at a time).
  const recordBlobs = records.map((r) => r.blobId);
  if (recordBlobs.length) {
    const present = new Set(
      (
        await deps.models.Document.db
          .collection<{ _id: string }>(deps.blobs.filesCollection)
          .find({ _id: { $in: recordBlobs } }, { projection: { _id: 1 } })
          .toArray()
      ).map((f) => f._id),
    );
    for (const r of records) {
      if (!present.has(r.blobId)) {
        found({ kind: 'record-without-blob', id: r._id, detail: `blob ${r.blobId} is missing`, repaired: false });
      }
    }
  }

  // Bytes nothing refers to.
  const blobIds = await deps.blobs.listIds({ before: settled, after: options.cursor?.blob, limit: options.limit });
  if (blobIds.length) {
    const used = new Set<string>();
    for (const model of [deps.models.Document, deps.models.As4Inbound] as const) {
      const refs = await (model as typeof deps.models.Document)
        .find({ blobId: { $in: blobIds } }, { blobId: 1 })
        .lean<Array<{ blobId: string }>>()
        .exec();
      for (const r of refs) used.add(r.blobId);
    }
    for (const id of blobIds) {
      if (used.has(id)) continue;
      if (!options.dryRun) await deps.blobs.delete(id);
      found({
        kind: 'blob-without-record',
        id,
        detail: 'no document or received message refers to it',
        repaired: !options.dryRun,
      });
    }
  }

  const chunks = await deps.blobs.listChunkOrphans({
    before: settled,
    after: options.cursor?.chunk,
    limit: options.limit,
  });
  for (const id of chunks.blobIds) {
    if (!options.dryRun) await deps.blobs.deleteOrphanChunks(id);
    found({
      kind: 'chunks-without-blob',
      id,
      detail: 'an upload stopped before its file record',
      repaired: !options.dryRun,
    });
  }

  return {
    findings,
    checked: { records: records.length, blobs: blobIds.length, chunks: chunks.scanned },
    // A short page means the end: the next run starts from the beginning again.
    next: {
      record: records.length === options.limit ? records[records.length - 1]!.createdAt.toISOString() : undefined,
      blob: blobIds.length === options.limit ? blobIds[blobIds.length - 1] : undefined,
      chunk: chunks.scanned === options.limit ? chunks.last : undefined,
    },
  };
}
