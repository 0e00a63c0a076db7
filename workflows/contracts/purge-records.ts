/**
 * The purgeExpiredRecords workflow's contract: one run per tick of the retention schedule (a Temporal Schedule the
 * worker keeps), deleting in bounded steps the records past their retention period (docs/decisions.md "Retention").
 */
export const PURGE_RECORDS_WORKFLOW = 'purgeExpiredRecords';

/** The Temporal Schedule that starts it (one per namespace; every worker creates or updates it). */
export const RETENTION_SCHEDULE_ID = 'retention';

/** The workflow id of the schedule's runs (the schedule appends the start time). */
export const PURGE_RECORDS_WORKFLOW_ID = 'retention-purge';

/** The kinds of record retention deletes, in the order a purge goes through them. */
export const RETENTION_KINDS = ['documents', 'as4-messages', 'events', 'delivery-logs', 'inbox-entries'] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

/** Where a kind's scan goes on from: the time (ISO) and key of the last record looked at. */
export interface RetentionCursor {
  at: string;
  id: string;
}

export interface PurgeRecordsInput {
  /** The purge's clock (ISO): records are judged as of this instant; set at the first run, carried over. */
  asOf?: string;
  /** Steps (activity calls) in one run before it continues as new; default 100. */
  maxStepsPerRun?: number;
  /** Progress carried over continue-as-new. */
  kindIndex?: number;
  cursor?: RetentionCursor;
  totals?: Partial<Record<RetentionKind, PurgeTotals>>;
}

export interface PurgeTotals {
  scanned: number;
  purged: number;
  kept: number;
}

/** One step: a page of one kind. */
export interface PurgeStepRequest {
  kind: RetentionKind;
  asOf: string;
  cursor?: RetentionCursor;
  /** Names the step's purge intent (the run and the step number): a retried step writes the same one. */
  stepId: string;
}

export interface PurgeStepOutcome {
  kind: RetentionKind;
  scanned: number;
  purged: number;
  blobs: number;
  /** Records past the first cut-off that were kept, by reason (held, not-final, running, too-young, unprocessed). */
  kept: Record<string, number>;
  resumed: number;
  /** Absent: the kind is done for this purge. */
  next?: RetentionCursor;
}

export interface PurgeRecordsResult {
  asOf: string;
  totals: Partial<Record<RetentionKind, PurgeTotals>>;
}
