import type { mongo } from 'mongoose';
import type { Models } from '../models';
import { isDuplicateKeyError } from '../connection';
import { withStorageRetries } from '../retry';
import type { InboxAckDoc, InboxEntryDoc } from './event.schema';

export type { InboxAckDoc, InboxEntryDoc } from './event.schema';

/** Position in a hook's inbox: (createdOn, id). */
export interface InboxPosition {
  createdOn: Date;
  id: string;
}

/** Entries read per query while a page of unacknowledged ones is gathered. */
const SCAN_BATCH = 200;

/**
 * The inboxes of httpsin hooks. Only inserts: an entry per (hook, event) under its delivery id, and an acknowledgement
 * per entry under the entry's id. Concurrent deliveries of one entry, or concurrent acknowledgements, race on a unique
 * key and the loser's duplicate-key error is its answer (decisions.md "Storage writes"); nothing is ever updated.
 */
export class InboxRepository {
  constructor(private readonly models: Models) {}

  private get entries(): mongo.Collection<InboxEntryDoc> {
    return this.models.InboxEntry.collection as unknown as mongo.Collection<InboxEntryDoc>;
  }

  private get acks(): mongo.Collection<InboxAckDoc> {
    return this.models.InboxAck.collection as unknown as mongo.Collection<InboxAckDoc>;
  }

  /** Puts an entry in; 'exists' when the (hook, event) entry is there already (a retried or repeated delivery). */
  async put(entry: InboxEntryDoc): Promise<'inserted' | 'exists'> {
    try {
      await withStorageRetries(() => this.entries.insertOne({ ...entry }));
      return 'inserted';
    } catch (e) {
      if (isDuplicateKeyError(e)) return 'exists';
      throw e;
    }
  }

  /** One entry by id (the hook and tenant are the caller's to check). */
  async get(entryId: string): Promise<InboxEntryDoc | null> {
    return this.models.InboxEntry.findById(entryId).lean<InboxEntryDoc>().exec();
  }

  /** The acknowledgement of an entry, if any. */
  async ackOf(entryId: string): Promise<InboxAckDoc | null> {
    return this.models.InboxAck.findById(entryId).lean<InboxAckDoc>().exec();
  }

  /**
   * Acknowledges an entry: the first call's insert lands; a repeat (or a concurrent twin) finds that one. Resolves the
   * acknowledgement that holds.
   */
  async ack(
    entry: Pick<InboxEntryDoc, '_id' | 'tenantId' | 'hookId'>,
    at: Date,
  ): Promise<{ ack: InboxAckDoc; first: boolean }> {
    const doc: InboxAckDoc = { _id: entry._id, tenantId: entry.tenantId, hookId: entry.hookId, at };
    try {
      await withStorageRetries(() => this.acks.insertOne({ ...doc }));
      return { ack: doc, first: true };
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      const existing = await this.ackOf(entry._id);
      if (!existing) throw e;
      return { ack: existing, first: false };
    }
  }

  /**
   * Unacknowledged entries of a hook after `after`, oldest first, at most `limit`. Acknowledged entries are skipped in
   * batches; at most `maxScanned` entries are read, so a long acknowledged stretch ends a page early: `scannedTo` is then
   * where the next page starts (null when the inbox was read to its end).
   */
  async listUnacknowledged(
    hookId: string,
    options: { after?: InboxPosition | undefined; limit: number; maxScanned: number },
  ): Promise<{ items: InboxEntryDoc[]; scannedTo: InboxPosition | null }> {
    const items: InboxEntryDoc[] = [];
    let position = options.after;
    let scanned = 0;
    while (items.length < options.limit && scanned < options.maxScanned) {
      const batch = Math.min(SCAN_BATCH, options.maxScanned - scanned);
      const and: Record<string, unknown>[] = [{ hookId }];
      if (position) {
        and.push({
          $or: [
            { createdOn: { $gt: position.createdOn } },
            { createdOn: position.createdOn, _id: { $gt: position.id } },
          ],
        });
      }
      const docs = await this.models.InboxEntry.find({ $and: and })
        .sort({ createdOn: 1, _id: 1 })
        .limit(batch)
        .lean<InboxEntryDoc[]>()
        .exec();
      scanned += docs.length;
      const acked = new Set(
        docs.length === 0
          ? []
          : (
              await this.models.InboxAck.find({ _id: { $in: docs.map((d) => d._id) } }, { _id: 1 })
                .lean<Pick<InboxAckDoc, '_id'>[]>()
                .exec()
            ).map((a) => a._id),
      );
      for (const d of docs) {
        position = { createdOn: d.createdOn, id: d._id };
        if (acked.has(d._id)) continue;
        items.push(d);
        if (items.length === options.limit) return { items, scannedTo: position };
      }
      if (docs.length < batch) return { items, scannedTo: null };
    }
    return { items, scannedTo: position ?? null };
  }
}
