import { randomUUID } from 'node:crypto';
import type { mongo } from 'mongoose';
import type { Models } from '../models';
import { isDuplicateKeyError } from '../connection';
import { withStorageRetries } from '../retry';
import type { ClaimDoc, HeldDeliveryDoc } from './event.schema';
import { dropNumberedLeases, takeNumberedLease } from '../lease';

export type { HeldDeliveryDoc } from './event.schema';

/** A held delivery as a claim returned it; `claimNo` and `claimUntil` are the claim's, for remove. */
export type ClaimedDelivery = HeldDeliveryDoc & { claimNo: number; claimUntil: Date };

/** What claims of one record are keyed by: a record is new (a new seq) on every hold. */
const claimKey = (doc: Pick<HeldDeliveryDoc, '_id' | 'seq'>): string => `${doc._id}/${doc.seq}`;

/** How long a run that replaces an earlier run's record keeps others off it while it does. */
const REPLACE_LEASE_MS = 60_000;

/**
 * Deliveries of stuck hooks waiting with no run open. Every write is an insert or a removal by the one who holds a
 * claim (FerretDB applies updates as read-modify-write and makes no guarded update a compare-and-set):
 *
 * - A record is inserted by the run that holds the delivery (the only open run under its workflow id) and never
 *   changed after; its `seq` is new on every hold.
 * - Claims are documents of their own (`heldclaims`, numbered leases of src/storage/lease.ts): a release claims
 *   the record for a lease. Exactly one taker wins each number.
 * - Only the holder of a live claim removes a record: a release after starting the next run (or finding a later run),
 *   or a later run replacing an earlier run's record it found in its way.
 */
export class HeldDeliveryRepository {
  constructor(private readonly models: Models) {}

  private get held(): mongo.Collection<HeldDeliveryDoc> {
    return this.models.HeldDelivery.collection as unknown as mongo.Collection<HeldDeliveryDoc>;
  }

  private get claims(): mongo.Collection<ClaimDoc> {
    return this.models.HeldClaim.collection as unknown as mongo.Collection<ClaimDoc>;
  }

  private read(id: string): Promise<HeldDeliveryDoc | null> {
    return this.models.HeldDelivery.findById(id).lean<HeldDeliveryDoc>().exec();
  }

  /**
   * Writes the record of a run that holds its delivery; resolves its seq. The run's own record found (a retried hold)
   * is returned as it is. An earlier run's record in the way (a release has started this run and not removed it yet,
   * or it was left behind) is claimed and removed first; null when a release still has it (hold again later).
   */
  async hold(doc: Omit<HeldDeliveryDoc, 'seq'>): Promise<string | null> {
    const seq = randomUUID();
    for (let tries = 0; tries < 5; tries++) {
      try {
        await withStorageRetries(() => this.held.insertOne({ ...doc, seq }));
        return seq;
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
      }
      const existing = await this.read(doc._id);
      if (!existing) continue;
      if (existing.heldByRunId === doc.heldByRunId) return existing.seq;
      const now = new Date();
      const until = new Date(now.getTime() + REPLACE_LEASE_MS);
      const claimed = await this.claimRecord(existing, now, until, `run:${doc.heldByRunId}`);
      if (!claimed) return null;
      await this.remove(claimed);
    }
    return null;
  }

  /** Claims one record by its workflow id for a lease; null when none is held, or another claim is live. */
  async claim(id: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | null> {
    const doc = await this.read(id);
    return doc ? this.claimRecord(doc, now, new Date(now.getTime() + leaseMs), randomUUID()) : null;
  }

  /**
   * Claims up to `limit` records due at `now`, the longest due first, then those whose last claim ended without
   * their removal (a release that failed comes back after its lease, as it did when a claim moved `dueAt`).
   */
  async claimDue(now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const due = await this.models.HeldDelivery.find({ dueAt: { $lte: now } }, { _id: 1 })
      .sort({ dueAt: 1 })
      .limit(limit)
      .lean<Array<Pick<HeldDeliveryDoc, '_id'>>>()
      .exec();
    const ids = new Set(due.map((d) => d._id));
    if (ids.size < limit) {
      const ended = await this.models.HeldClaim.find({ until: { $lte: now } }, { key: 1, workflowId: 1 })
        .limit(limit)
        .lean<Array<Pick<ClaimDoc, '_id' | 'key' | 'workflowId'>>>()
        .exec();
      for (const c of ended) {
        if (!c.workflowId || ids.size >= limit || ids.has(c.workflowId)) continue;
        const doc = await this.read(c.workflowId);
        // A claim left behind by a holder that removed its record and stopped before its claims: nothing to claim.
        if (!doc || claimKey(doc) !== c.key) await withStorageRetries(() => this.claims.deleteOne({ _id: c._id }));
        else ids.add(c.workflowId);
      }
    }
    const claimed: ClaimedDelivery[] = [];
    for (const id of ids) {
      const c = await this.claim(id, now, leaseMs);
      if (c) claimed.push(c);
    }
    return claimed;
  }

  /**
   * Removes a claimed record and its claims: by the claim's holder, once the delivery's next run has started (or a
   * later run was found). A record held again since (a new seq) is not touched.
   */
  async remove(c: Pick<ClaimedDelivery, '_id' | 'seq' | 'claimNo'>): Promise<void> {
    const current = await this.read(c._id);
    if (current?.seq === c.seq) await withStorageRetries(() => this.held.deleteOne({ _id: c._id }));
    await dropNumberedLeases(this.claims, claimKey(c), c.claimNo);
  }

  /**
   * The workflow ids of a hook's held deliveries with no live claim at `now`, oldest first (released on an answer) or
   * newest first (released on a timeout).
   */
  async unclaimedIdsForHook(
    hookId: string,
    now: Date,
    limit: number,
    order: 'oldest' | 'newest' = 'oldest',
  ): Promise<string[]> {
    const live = await this.models.HeldClaim.find({ hookId, until: { $gt: now } }, { workflowId: 1 })
      .lean<Array<Pick<ClaimDoc, 'workflowId'>>>()
      .exec();
    const claimed = live.flatMap((c) => (c.workflowId ? [c.workflowId] : []));
    const filter = claimed.length > 0 ? { hookId, _id: { $nin: claimed } } : { hookId };
    const docs = await this.models.HeldDelivery.find(filter, { _id: 1 })
      .sort({ heldAt: order === 'oldest' ? 1 : -1 })
      .limit(limit)
      .lean<Array<Pick<HeldDeliveryDoc, '_id'>>>()
      .exec();
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

  /**
   * A claim on the record as read: the next number after the expired ones. Read again once taken: a record removed
   * or held again in between (its claims dropped, so the number was free) is not claimed after all.
   */
  private async claimRecord(
    doc: HeldDeliveryDoc,
    now: Date,
    until: Date,
    owner: string,
  ): Promise<ClaimedDelivery | null> {
    const key = claimKey(doc);
    const fields = { key, workflowId: doc._id, hookId: doc.hookId };
    const taken = await takeNumberedLease(this.claims, key, owner, now, until, fields);
    if (!taken) return null;
    const again = await this.read(doc._id);
    if (again?.seq !== doc.seq) {
      await dropNumberedLeases(this.claims, key, taken.n);
      return null;
    }
    return { ...again, claimNo: taken.n, claimUntil: taken.until };
  }
}
