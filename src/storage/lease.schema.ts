import { Schema, type Connection, type Model } from 'mongoose';

/**
 * An exclusive lease on a key, for writers that must read, change and write back a document another writer could
 * reach at the same time (the database gives no compare-and-set: docs/decisions.md, "Storage writes"). Leases on a
 * key are numbered: lease n is the document `<key>#<n>`, and a taker inserts number n+1 only after reading number n
 * (the highest) released or expired, so each number has exactly one holder and none is taken while the one before
 * is held. Only its holder writes a lease after inserting it (to release it); takers only read.
 */
export interface LeaseDoc {
  _id: string;
  key: string;
  n: number;
  holder: string;
  until: Date;
  releasedAt: Date | null;
}

export function buildLeaseModel(conn: Connection): Model<LeaseDoc> {
  const schema = new Schema<LeaseDoc>(
    {
      _id: { type: String, required: true },
      key: { type: String, required: true },
      n: { type: Number, required: true },
      holder: { type: String, required: true },
      until: { type: Date, required: true },
      releasedAt: { type: Date, default: null },
    },
    { versionKey: false },
  );
  schema.index({ key: 1, n: -1 });
  return conn.model<LeaseDoc>('Lease', schema, 'leases');
}
