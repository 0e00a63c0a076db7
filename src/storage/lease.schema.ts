import { Schema, type Connection, type Model } from 'mongoose';

/**
 * A numbered lease on a key (src/storage/lease.ts), for writers that must read, change and write back a document
 * another writer could reach at the same time (the database gives no compare-and-set: docs/decisions.md, "Storage
 * writes"). Lease n of a key is the document `<key>#<n>`, inserted by its one taker and removed by its holder; never
 * updated.
 */
export interface LeaseDoc {
  _id: string;
  key: string;
  n: number;
  owner: string;
  at: Date;
  until: Date;
}

export function buildLeaseModel(conn: Connection): Model<LeaseDoc> {
  const schema = new Schema<LeaseDoc>(
    {
      _id: { type: String, required: true },
      key: { type: String, required: true },
      n: { type: Number, required: true },
      owner: { type: String, required: true },
      at: { type: Date, required: true },
      until: { type: Date, required: true },
    },
    { versionKey: false },
  );
  schema.index({ key: 1, n: -1 });
  return conn.model<LeaseDoc>('Lease', schema, 'leases');
}
