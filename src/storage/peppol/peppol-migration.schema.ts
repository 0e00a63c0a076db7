import { Schema, type Connection } from 'mongoose';

/**
 * One participant migration key, as the provider it leaves (`outbound`: we prepared the key) or as the provider it
 * joins (`inbound`: we took it over with the key). Insert-only and keyed by direction, participant and key digest, so a
 * key is used once even by two racing requests (FerretDB has no compare-and-set; a unique key holds). The key itself
 * is never stored.
 */
export interface PeppolMigrationDoc {
  /** `<direction>:<lower-cased participant value>:<sha256 hex of the key>`. */
  _id: string;
  direction: 'outbound' | 'inbound';
  /** The lower-cased participant value. */
  participant: string;
  tenantId: string;
  partyId: string;
  createdOn: Date;
}

export function buildPeppolMigrationModels(conn: Connection) {
  const migration = new Schema<PeppolMigrationDoc>(
    {
      _id: { type: String, required: true },
      direction: { type: String, required: true, enum: ['outbound', 'inbound'] },
      participant: { type: String, required: true },
      tenantId: { type: String, required: true },
      partyId: { type: String, required: true },
      createdOn: { type: Date, required: true },
    },
    { versionKey: false },
  );
  migration.index({ participant: 1, direction: 1 });
  return {
    PeppolMigration: conn.model<PeppolMigrationDoc>('PeppolMigration', migration, 'peppolmigrations'),
  };
}
