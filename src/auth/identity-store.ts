import type { SubscriptionKeyLookup } from './subscription-keys';

/**
 * Storage port of the identity server. The token endpoint and the API's token check read through it; the MongoDB
 * adapter and the in-memory one (tests) implement it. Hashes only: a secret or password in clear never reaches it.
 */

export interface ClientSecretRecord {
  id: string;
  /** `secret-hash.ts` format. */
  hash: string;
  createdAt: Date;
  /** Set when revoked; a revoked secret no longer authenticates and every token issued through it is refused. */
  revokedAt?: Date | null;
}

export interface ClientRecord {
  clientId: string;
  name?: string;
  tenantIds: string[];
  /** Several may be active at once (spec 5.9: one per environment, end customer or application). */
  secrets: ClientSecretRecord[];
  disabled?: boolean;
}

export interface UserRecord {
  id: string;
  tenantId: string;
  username: string;
  passwordHash: string;
  /** The parties this account may act for in the password flow (spec 2.1 layer 2, 5.11). */
  partyIds: string[];
  disabled?: boolean;
}

export interface SigningKeyRecord {
  kid: string;
  alg: string;
  privateJwk: Record<string, unknown>;
  publicJwk: Record<string, unknown>;
  createdAt: Date;
  /** Operator override: the key is neither used nor published from this moment on (e.g. after a compromise). */
  notAfter?: Date | null;
}

/** `findSubscriptionKey` (subscription-keys.ts): a partner's Subscription-Key, read on each request that sends one. */
export interface IdentityStore extends SubscriptionKeyLookup {
  findClient(clientId: string): Promise<ClientRecord | null>;
  /** Usernames are globally unique. */
  findUserByUsername(username: string): Promise<UserRecord | null>;
  listSigningKeys(): Promise<SigningKeyRecord[]>;
  /** Must reject a duplicate `kid`. */
  insertSigningKey(key: SigningKeyRecord): Promise<void>;
}

/**
 * A revocation may be scheduled: the secret keeps working until `revokedAt`, so a client can roll over without a gap.
 */
export function isSecretActive(secret: ClientSecretRecord, now: Date = new Date()): boolean {
  return !secret.revokedAt || secret.revokedAt.getTime() > now.getTime();
}
