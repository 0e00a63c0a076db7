import { Schema, type Connection } from 'mongoose';

/**
 * One step of a replay run on one item (`npm run admin -- replay …`, src/replay): `_id` is
 * `<run id>|<item key>#claim<n>` or `…#done`. Claim n is inserted before the item is acted on, `done` after: both
 * are keyed inserts, never updated, so of two runs with one id only one acts on an item, and a run started again skips
 * what a previous one finished. A latest claim without `done` is an item in doubt (the run stopped or failed between
 * the two): the item's source resolves it from what the gateway recorded (a delivery run started, a resend's
 * generation), and when nothing was done claim n+1 is taken before acting again.
 */
export interface ReplayJournalDoc {
  _id: string;
  runId: string;
  itemKey: string;
  phase: 'claim' | 'done';
  /** The claim's number (from 1); 0 for `done`. */
  n: number;
  at: Date;
  /** `claim`: what the source needs to resolve the item in doubt (e.g. the generation before a resend). */
  before?: string | null;
  /** `done`: what acting did (`sent`, `already-sent`, `conflict`, …) and its detail. */
  outcome?: string | null;
  detail?: string | null;
}

const str = { type: String, required: true } as const;

export function buildReplayModels(conn: Connection) {
  const journal = new Schema<ReplayJournalDoc>(
    {
      _id: str,
      runId: str,
      itemKey: str,
      phase: { type: String, enum: ['claim', 'done'], required: true },
      n: { type: Number, required: true },
      at: { type: Date, required: true },
      before: { type: String, default: null },
      outcome: { type: String, default: null },
      detail: { type: String, default: null },
    },
    { versionKey: false },
  );
  journal.index({ runId: 1 });
  return { ReplayJournal: conn.model<ReplayJournalDoc>('ReplayJournal', journal, 'replayjournal') };
}
