import { Schema, type Connection } from 'mongoose';

/**
 * A legal hold on one document: while it exists, retention deletes neither the document nor what belongs to it (its
 * history, bytes, events, the AS4 message it arrived in). Keyed by the document's record key, inserted once; a release
 * deletes it. Never updated.
 */
export interface LegalHoldDoc {
  /** The document's record key `<tenantId>:<documentId>`. */
  _id: string;
  tenantId: string;
  documentId: string;
  reason: string;
  /** Who placed it (the operator's name as given). */
  by: string;
  at: Date;
  /** A received document: the AS4 MessageId it arrived in (that message is kept too). */
  as4MessageId: string | null;
}

/**
 * What one purge step is about to delete, written before the first delete and removed after the last, so a step that
 * dies half way is finished by the next (the deleted records no longer say which bytes were theirs).
 */
export interface PurgeIntentDoc {
  _id: string;
  kind: string;
  at: Date;
  /** Keys of the records (`_id`s of the kind's main collection). */
  ids: string[];
  /** Documents: tenant and id of each (their Peppol references go with them). */
  documents: Array<{ tenantId: string; documentId: string }>;
  /** Stored bytes of the records (conversions made from them are found by their `convertedFrom`). */
  blobIds: string[];
}

const str = { type: String, required: true } as const;

export function buildRetentionModels(conn: Connection) {
  const hold = new Schema<LegalHoldDoc>(
    {
      _id: str,
      tenantId: str,
      documentId: str,
      reason: str,
      by: str,
      at: { type: Date, required: true },
      as4MessageId: { type: String, default: null },
    },
    { versionKey: false },
  );
  hold.index({ as4MessageId: 1 });
  const intent = new Schema<PurgeIntentDoc>(
    {
      _id: str,
      kind: str,
      at: { type: Date, required: true },
      ids: { type: [String], default: [] },
      documents: { type: [{ _id: false, tenantId: str, documentId: str }], default: [] },
      blobIds: { type: [String], default: [] },
    },
    { versionKey: false },
  );
  intent.index({ kind: 1, at: 1 });
  return {
    LegalHold: conn.model<LegalHoldDoc>('LegalHold', hold, 'legalholds'),
    PurgeIntent: conn.model<PurgeIntentDoc>('PurgeIntent', intent, 'purgeintents'),
  };
}
