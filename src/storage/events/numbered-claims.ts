import type { mongo } from 'mongoose';
import { isDuplicateKeyError } from '../connection';
import { withStorageRetries } from '../retry';

/**
 * Exclusive claims taken by inserts. On FerretDB 1.24 an update whose filter is a precondition is not a
 * compare-and-set (two racers both match and both "modify"), and two updates of one document can lose one; a unique
 * key does hold: of concurrent inserts of one `_id` exactly one lands. So a claim on `key` is the document
 * `<key>#<n>`: a taker inserts number 1, and number n+1 only after it has read number n and seen its lease expired.
 * Each number has exactly one taker, and while a number's lease lasts nobody takes the next.
 */

/** The fields every numbered claim document has (collections add their own). */
export interface NumberedClaim {
  _id: string;
  n: number;
  owner: string;
  at: Date;
  until: Date;
}

/** A claim as taken: its number and document id, and when its lease ends. */
export interface TakenClaim {
  id: string;
  n: number;
  until: Date;
}

/** Never ends: a claim that settles who owns something for good (a holding run taking its record back). */
export const FOREVER = new Date('9999-12-31T00:00:00Z');

/** Numbers tried at most in one take: each is a claim that was taken and expired; far more than ever pile up. */
const MAX_NUMBERS = 1000;

export const claimId = (key: string, n: number): string => `${key}#${n}`;

type ClaimCollection<T extends NumberedClaim> = mongo.Collection<T>;

/**
 * Takes the next claim on `key` for `owner`, with a lease to `until`. Null when a live claim of another owner has
 * it. A claim of the same owner, live or not, is its own (a retried take), and is returned as taken.
 */
export async function takeClaim<T extends NumberedClaim>(
  collection: ClaimCollection<T>,
  key: string,
  owner: string,
  now: Date,
  until: Date,
  fields: Omit<T, keyof NumberedClaim>,
): Promise<TakenClaim | null> {
  for (let n = 1; n <= MAX_NUMBERS;) {
    const id = claimId(key, n);
    try {
      const doc = { ...fields, _id: id, n, owner, at: now, until } as unknown as mongo.OptionalUnlessRequiredId<T>;
      await withStorageRetries(() => collection.insertOne(doc));
      return { id, n, until };
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
    }
    const existing = (await collection.findOne({ _id: id } as mongo.Filter<T>)) as NumberedClaim | null;
    // Removed since the insert failed (its holder finished): the same number is free again.
    if (!existing) continue;
    if (existing.owner === owner) return { id, n, until: existing.until };
    if (existing.until.getTime() > now.getTime()) return null;
    n += 1;
  }
  throw new Error(`more than ${MAX_NUMBERS} expired claims on ${key}`);
}

/** Removes claims 1..n of `key` (by their holder, once what they claimed is settled). */
export async function dropClaims<T extends NumberedClaim>(
  collection: ClaimCollection<T>,
  key: string,
  n: number,
): Promise<void> {
  const ids = Array.from({ length: n }, (_, i) => claimId(key, i + 1));
  await withStorageRetries(() => collection.deleteMany({ _id: { $in: ids } } as mongo.Filter<T>));
}
