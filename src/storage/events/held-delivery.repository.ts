import { randomUUID } from 'node:crypto';
import type { Models } from '../models';
import { withStorageRetries } from '../retry';
import type { HeldDeliveryDoc } from './event.schema';

export type { HeldDeliveryDoc } from './event.schema';

/** Records no release has a live claim on. */
function unclaimedAt(now: Date) {
  return { $or: [{ claimedUntil: { $exists: false } }, { claimedUntil: { $lte: now } }] };
}

/** A held delivery as a claim returned it: `seq` is the claim's, for removeIfUnchanged. */
export type ClaimedDelivery = HeldDeliveryDoc;

/**
 * Deliveries of stuck hooks waiting with no run open. Held by the run that found its hook stuck, claimed by whoever
 * releases it (a claim renews `seq` and holds the record for a lease, also moving `dueAt` to the lease's end: no other
 * releaser claims it meanwhile, so two never start the same record twice, and one that dies leaves it to the sweep
 * after the lease), removed once the next run has started.
 */
export class HeldDeliveryRepository {
  constructor(private readonly models: Models) {}

  /** Writes (or rewrites: a delivery held again) the record; a new `seq` makes earlier claims of it stale. */
  async hold(doc: Omit<HeldDeliveryDoc, 'seq'>): Promise<string> {
    const seq = randomUUID();
    await withStorageRetries(() => this.models.HeldDelivery.replaceOne({ _id: doc._id }, { ...doc, seq }, { upsert: true }));
    return seq;
  }

  /** Claims one record by its workflow id; null when none is held, or another release has it. */
  claim(id: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | null> {
    return this.claimWhere({ _id: id }, now, leaseMs);
  }

  /** Claims up to `limit` records due at `now`, the longest due first. */
  async claimDue(now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const due = await this.models.HeldDelivery.find({ dueAt: { $lte: now } }, { _id: 1, seq: 1 }).sort({ dueAt: 1 }).limit(limit).lean<Array<Pick<HeldDeliveryDoc, '_id' | 'seq'>>>().exec();
    const claimed: ClaimedDelivery[] = [];
    for (const d of due) {
      // Claimed by another releaser since the read: its seq changed, and this one leaves it alone.
      const c = await this.claimWhere({ _id: d._id, seq: d.seq }, now, leaseMs);
      if (c) claimed.push(c);
    }
    return claimed;
  }

  /** A claim: a new `seq`, held and due again at the lease's end, on the record the filter finds if no claim is live. */
  private claimWhere(filter: Pick<HeldDeliveryDoc, '_id'> & Partial<Pick<HeldDeliveryDoc, 'seq'>>, now: Date, leaseMs: number): Promise<ClaimedDelivery | null> {
    const until = new Date(now.getTime() + leaseMs);
    return this.models.HeldDelivery.findOneAndUpdate({ ...filter, ...unclaimedAt(now) }, { $set: { seq: randomUUID(), dueAt: until, claimedUntil: until } }, { returnDocument: 'after' })
      .lean<ClaimedDelivery>()
      .exec();
  }

  /** Removes the record if nothing held or claimed it since `seq` was given out; true when it did. */
  async removeIfUnchanged(id: string, seq: string): Promise<boolean> {
    const r = await withStorageRetries(() => this.models.HeldDelivery.deleteOne({ _id: id, seq }).exec());
    return r.deletedCount === 1;
  }

  /** The workflow ids of one hook's held deliveries not claimed at `now`, oldest first (its release on an answer). */
  async unclaimedIdsForHook(hookId: string, now: Date, limit: number): Promise<string[]> {
    const docs = await this.models.HeldDelivery.find({ hookId, ...unclaimedAt(now) }, { _id: 1 }).sort({ heldAt: 1 }).limit(limit).lean<Array<Pick<HeldDeliveryDoc, '_id'>>>().exec();
    return docs.map((d) => d._id);
  }

  /** The hooks that have held deliveries (the index on hookId answers it). */
  async hookIdsWithHeld(): Promise<string[]> {
    return (await this.models.HeldDelivery.distinct('hookId').exec()).map(String);
  }

  /** The held deliveries of one hook, oldest first (operators, tests). */
  async listForHook(hookId: string, limit = 1000): Promise<HeldDeliveryDoc[]> {
    return this.models.HeldDelivery.find({ hookId }).sort({ heldAt: 1 }).limit(limit).lean<HeldDeliveryDoc[]>().exec();
  }
}
