import type { mongo } from 'mongoose';
import { isDuplicateKeyError } from '../connection';
import type { Models } from '../models';
import { withStorageRetries } from '../retry';
import type { ReplayJournalDoc } from './replay-journal.schema';

export type { ReplayJournalDoc } from './replay-journal.schema';

/** Where a replay run stands on its items: claimed (acting began) and done (acting ended), by item key. */
export interface ReplayRunState {
  claims: Map<string, ReplayJournalDoc>;
  done: Map<string, ReplayJournalDoc>;
}

const claimId = (runId: string, itemKey: string, n: number): string => `${runId}|${itemKey}#claim${n}`;
const doneId = (runId: string, itemKey: string): string => `${runId}|${itemKey}#done`;

/** The journal of replay runs: inserts only (decisions.md "Bulk replay"). */
export class ReplayJournalRepository {
  constructor(private readonly models: Models) {}

  private get collection(): mongo.Collection<ReplayJournalDoc> {
    return this.models.ReplayJournal.collection as unknown as mongo.Collection<ReplayJournalDoc>;
  }

  /** Everything recorded for a run (one read per run, not per item): per item its latest claim and its done. */
  async state(runId: string): Promise<ReplayRunState> {
    const docs = await this.models.ReplayJournal.find({ runId }).lean<ReplayJournalDoc[]>().exec();
    const state: ReplayRunState = { claims: new Map(), done: new Map() };
    for (const d of docs) {
      if (d.phase === 'done') state.done.set(d.itemKey, d);
      else if ((state.claims.get(d.itemKey)?.n ?? 0) < d.n) state.claims.set(d.itemKey, d);
    }
    return state;
  }

  /** True when this call took claim n of the item; false when another run with the same id took it first. */
  async claim(runId: string, itemKey: string, n: number, before: string | null, at = new Date()): Promise<boolean> {
    return this.insert({ _id: claimId(runId, itemKey, n), runId, itemKey, phase: 'claim', n, at, before });
  }

  /** Records the item done; a repeat finds the first record and changes nothing. */
  async done(runId: string, itemKey: string, outcome: string, detail: string | null, at = new Date()): Promise<void> {
    await this.insert({ _id: doneId(runId, itemKey), runId, itemKey, phase: 'done', n: 0, at, outcome, detail });
  }

  private async insert(doc: ReplayJournalDoc): Promise<boolean> {
    try {
      await withStorageRetries(() => this.collection.insertOne(doc));
      return true;
    } catch (e) {
      if (isDuplicateKeyError(e)) return false;
      throw e;
    }
  }
}
