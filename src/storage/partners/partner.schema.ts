import { Schema, type Connection } from 'mongoose';

/** A software partner (spec 2.1 layer 4): the one a Subscription-Key names in the request log. Inserted once. */
export interface PartnerDoc {
  _id: string;
  name: string;
  createdAt: Date;
}

/** A partner's subscription key: the hash of its secret only. Inserted once, never changed. */
export interface SubscriptionKeyDoc {
  _id: string;
  partnerId: string;
  hash: string;
  createdAt: Date;
}

/** The revocation of a key, keyed by the key id: an insert of its own, so no key record is ever updated. */
export interface SubscriptionKeyRevocationDoc {
  _id: string;
  revokedAt: Date;
}

const str = { type: String, required: true } as const;
const at = { type: Date, required: true } as const;

export function buildPartnerModels(conn: Connection) {
  const partner = new Schema<PartnerDoc>({ _id: str, name: str, createdAt: at }, { versionKey: false });
  const key = new Schema<SubscriptionKeyDoc>(
    { _id: str, partnerId: str, hash: str, createdAt: at },
    { versionKey: false },
  );
  key.index({ partnerId: 1 });
  const revocation = new Schema<SubscriptionKeyRevocationDoc>({ _id: str, revokedAt: at }, { versionKey: false });
  return {
    Partner: conn.model<PartnerDoc>('Partner', partner, 'partners'),
    SubscriptionKey: conn.model<SubscriptionKeyDoc>('SubscriptionKey', key, 'subscriptionkeys'),
    SubscriptionKeyRevocation: conn.model<SubscriptionKeyRevocationDoc>(
      'SubscriptionKeyRevocation',
      revocation,
      'subscriptionkeyrevocations',
    ),
  };
}
