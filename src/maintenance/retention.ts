import { DocumentState, isFinalOrder, SIDE_STATES } from '../core/document-states';
import type { RetentionPeriods } from '../config/load-config';
import type { DocumentDoc, DocumentHistoryDoc } from '../storage/models';
import type { Logger } from '../observability/logger';
import type { RetentionCursor, RetentionKind } from '../../workflows/contracts/purge-records';
import {
  type PurgeSelection,
  type RetentionRepository,
  type RetentionRow,
} from '../storage/retention/retention.repository';

export type { RetentionCursor, RetentionKind };

/** Why a record past the first cut-off was kept. */
export type KeepReason = 'held' | 'not-final' | 'running' | 'too-young' | 'unprocessed';

export type Verdict = { purge: true } | { purge: false; reason: KeepReason };

/**
 * Whether a document may be deleted at `asOf`. A document whose life has not ended (no final entry on a sent
 * document) is never deleted, nor one under a legal hold or with a run still open. The period runs from its last
 * entry (a response or a tax report step after delivery moves it on): a sent document in InvoiceSentError is kept
 * `failedDocument` (the contract's 90 days), every other one `document`; a received document has no final entry, so
 * its period runs from its last entry too.
 */
export function documentVerdict(
  stored: Pick<DocumentDoc, 'direction' | 'createdAt'>,
  entries: ReadonlyArray<Pick<DocumentHistoryDoc, 'state' | 'order' | 'at'>>,
  context: { asOf: Date; periods: RetentionPeriods; held: boolean; running: boolean },
): Verdict {
  if (context.held) return { purge: false, reason: 'held' };
  const sorted = [...entries].sort((a, b) => a.order - b.order || a.at.getTime() - b.at.getTime());
  const last = sorted.filter((e) => !SIDE_STATES.has(e.state)).at(-1);
  const final = last !== undefined && isFinalOrder(last.order);
  if (stored.direction === 'outbound' && !final) return { purge: false, reason: 'not-final' };
  if (context.running) return { purge: false, reason: 'running' };
  const lastAt = Math.max(stored.createdAt.getTime(), ...entries.map((e) => e.at.getTime()));
  const period =
    final && last.state === DocumentState.InvoiceSentError ? context.periods.failedDocument : context.periods.document;
  return lastAt + period <= context.asOf.getTime() ? { purge: true } : { purge: false, reason: 'too-young' };
}

/** The period of a kind: how old its oldest record must be before any of it is looked at. */
export function firstCutOff(kind: RetentionKind, periods: RetentionPeriods, asOf: Date): Date {
  const ms = {
    documents: Math.min(periods.failedDocument, periods.document),
    'as4-messages': periods.as4Message,
    events: periods.event,
    'delivery-logs': periods.deliveryLog,
    'inbox-entries': periods.inboxEntry,
  }[kind];
  return new Date(asOf.getTime() - ms);
}

/** Which documents have a run still open (Temporal's view: runs carrying TenantId and DocumentId). */
export interface OpenRunLookup {
  /** The record keys (`<tenantId>:<documentId>`) among these with a running workflow. */
  openDocumentRuns(documents: ReadonlyArray<{ tenantId: string; documentId: string }>): Promise<Set<string>>;
}

export interface PurgeStepInput {
  kind: RetentionKind;
  /** The purge's clock: records are judged as of this instant (the run's start, fixed for all its steps). */
  asOf: Date;
  cursor?: RetentionCursor | undefined;
  /** Names the step's purge intent: the same step retried writes the same intent. */
  stepId: string;
}

export interface PurgeStepResult {
  kind: RetentionKind;
  scanned: number;
  purged: number;
  /** Blobs of the purged records. */
  blobs: number;
  kept: Partial<Record<KeepReason, number>>;
  /** Intents of earlier steps finished first. */
  resumed: number;
  /** Where the next step goes on; absent: the kind is done for this purge. */
  next?: RetentionCursor;
}

export interface RetentionDeps {
  repository: RetentionRepository;
  runs: OpenRunLookup;
  logger?: Logger;
}

/**
 * One bounded step of a purge: finishes what an earlier step left (its intents), reads one page (`batchSize`) of the
 * kind's records older than its first cut-off, judges each, and deletes the eligible ones in one batch. Repeating a
 * step deletes nothing twice and never deletes a kept record.
 */
export async function purgeStep(
  deps: RetentionDeps,
  settings: { periods: RetentionPeriods; batchSize: number },
  input: PurgeStepInput,
): Promise<PurgeStepResult> {
  const { repository: repo } = deps;
  const pending = await repo.pendingIntents(input.kind, 10);
  for (const intent of pending) await repo.finish(intent);

  const page = await repo.page(
    input.kind,
    firstCutOff(input.kind, settings.periods, input.asOf),
    input.cursor,
    settings.batchSize,
  );
  const kept: Partial<Record<KeepReason, number>> = {};
  const keep = (reason: KeepReason) => (kept[reason] = (kept[reason] ?? 0) + 1);
  const selection: PurgeSelection = { ids: [], documents: [], blobIds: [] };
  const take = (row: RetentionRow) => {
    selection.ids.push(row._id);
    if (row.blobId) selection.blobIds.push(row.blobId);
  };

  switch (input.kind) {
    case 'documents': {
      const found = await repo.documentsWithHistory(page.map((r) => r._id));
      const held = await repo.heldDocuments(found.map((f) => f.stored._id));
      // Only documents otherwise eligible are asked about (one visibility query per page).
      const candidates = found.filter(
        (f) =>
          documentVerdict(f.stored, f.entries, {
            ...settings,
            asOf: input.asOf,
            held: held.has(f.stored._id),
            running: false,
          }).purge,
      );
      const running = await deps.runs.openDocumentRuns(candidates.map((f) => f.stored));
      for (const { stored, entries } of found) {
        const verdict = documentVerdict(stored, entries, {
          periods: settings.periods,
          asOf: input.asOf,
          held: held.has(stored._id),
          running: running.has(stored._id),
        });
        if (!verdict.purge) {
          keep(verdict.reason);
          continue;
        }
        selection.ids.push(stored._id);
        selection.documents.push({ tenantId: stored.tenantId, documentId: stored.documentId });
        selection.blobIds.push(stored.blobId);
      }
      break;
    }
    case 'as4-messages': {
      const held = await repo.heldMessages(page.map((r) => r._id));
      for (const row of page) {
        if (held.has(row._id)) keep('held');
        // A message its receive run has not read yet is not settled: kept (reconciliation's to look at).
        else if (row.state === 'stored') keep('unprocessed');
        else take(row);
      }
      break;
    }
    case 'events': {
      const keys = page.flatMap((r) => (r.documentId ? [`${r.tenantId}:${r.documentId}`] : []));
      const held = await repo.heldDocuments(keys);
      for (const row of page) {
        if (row.documentId && held.has(`${row.tenantId}:${row.documentId}`)) keep('held');
        else take(row);
      }
      break;
    }
    default:
      for (const row of page) take(row);
  }

  await repo.purge(input.kind, `${input.kind}:${input.stepId}`, selection);
  const result: PurgeStepResult = {
    kind: input.kind,
    scanned: page.length,
    purged: selection.ids.length,
    blobs: selection.blobIds.length,
    kept,
    resumed: pending.length,
  };
  const last = page.at(-1);
  if (page.length === settings.batchSize && last) result.next = { at: last.at.toISOString(), id: last._id };
  deps.logger?.info({ retention: result }, `retention: ${input.kind} purged ${result.purged} of ${result.scanned}`);
  return result;
}
