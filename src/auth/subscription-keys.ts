import { randomUUID } from 'node:crypto';
import { generateClientSecret, hashClientSecret, verifyAgainstDecoy, verifySecret } from './secret-hash';
import { CLIENT_SECRET_SCRYPT_PARAMS } from './secret-hash';

/**
 * Subscription keys (spec 2.1 layer 4, 5.8): each is bound to one software partner and names that partner in the
 * request log. A key is `<keyId>.<secret>`: the id finds the record by key, the secret (256 bits) is checked against
 * the stored hash. Only the hash is stored; the key is shown once, when it is made.
 */

export interface SubscriptionKeyRecord {
  keyId: string;
  partnerId: string;
  /** `secret-hash.ts` format. */
  hash: string;
  createdAt: Date;
  /** Set once the key is revoked: from then on it is refused. */
  revokedAt: Date | null;
}

export interface SubscriptionKeyLookup {
  findSubscriptionKey(keyId: string): Promise<SubscriptionKeyRecord | null>;
}

const KEY = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

/** A fresh key: its id, the key as the partner sends it (shown once) and the hash to store. */
export async function generateSubscriptionKey(): Promise<{ keyId: string; key: string; hash: string }> {
  const keyId = randomUUID();
  const secret = generateClientSecret();
  return { keyId, key: `${keyId}.${secret}`, hash: await hashClientSecret(secret) };
}

/**
 * The partner a sent key belongs to, or null when the key is malformed, unknown or revoked. An unknown or malformed
 * key costs the time of one verification as well, so the answer time does not tell which key ids exist.
 */
export async function partnerOfSubscriptionKey(
  store: SubscriptionKeyLookup,
  sent: string,
  now: Date = new Date(),
): Promise<string | null> {
  const m = KEY.exec(sent);
  const record = m?.[1] ? await store.findSubscriptionKey(m[1]) : null;
  if (!m?.[2] || !record) return verifyAgainstDecoy(sent, CLIENT_SECRET_SCRYPT_PARAMS).then(() => null);
  const ok = await verifySecret(m[2], record.hash);
  if (!ok || (record.revokedAt && record.revokedAt.getTime() <= now.getTime())) return null;
  return record.partnerId;
}
