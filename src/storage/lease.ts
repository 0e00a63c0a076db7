import { randomUUID } from 'node:crypto';
import type { Model, mongo } from 'mongoose';
import { GatewayError } from '../core/gateway-error';
import { isDuplicateKeyError } from './connection';
import type { LeaseDoc } from './lease.schema';
import { withStorageRetries } from './retry';

export type { LeaseDoc } from './lease.schema';
export { buildLeaseModel } from './lease.schema';

/**
 * Numbered leases: the one way a writer gets a key to itself (docs/decisions.md, "Storage writes"). On FerretDB 1.24
 * an update whose filter is a precondition is not a compare-and-set (two racers both match and both "modify"), and
 * two updates of one document can lose one; a unique key does hold: of concurrent inserts of one `_id` exactly one
 * lands. So a lease on `key` is the document `<key>#<n>`: a taker inserts number 1, and number n+1 only after it has
 * read number n and seen its lease expired. Each number has exactly one taker, and while a number's lease lasts
 * nobody takes the next. Its holder drops numbers 1..n when done. Nothing is ever updated.
 *
 * Used as they are by the held deliveries (`heldclaims`: a release's claim on a record) and hook writes
 * (`hookwrites`), whose documents carry fields of their own, and through tryLease / withLease below (the `leases`
 * collection) by the directory and the Peppol directory for their read-change-write steps.
 */

/** The fields every numbered lease document has (collections add their own). */
export interface NumberedLease {
  _id: string;
  n: number;
  owner: string;
  at: Date;
  until: Date;
}

/** A lease as taken: its number and document id, and when it ends. */
export interface TakenLease {
  id: string;
  n: number;
  until: Date;
}

/** Numbers tried at most in one take: each is a lease that was taken and expired; far more than ever pile up. */
const MAX_NUMBERS = 1000;

export const leaseId = (key: string, n: number): string => `${key}#${n}`;

/**
 * Takes the next lease on `key` for `owner`, to `until`. Null when a live lease of another owner has it. A lease of
 * the same owner, live or not, is its own (a retried take), and is returned as taken.
 */
export async function takeNumberedLease<T extends NumberedLease>(
  collection: mongo.Collection<T>,
  key: string,
  owner: string,
  now: Date,
  until: Date,
  fields: Omit<T, keyof NumberedLease>,
): Promise<TakenLease | null> {
  for (let n = 1; n <= MAX_NUMBERS;) {
    const id = leaseId(key, n);
    try {
      const doc = { ...fields, _id: id, n, owner, at: now, until } as unknown as mongo.OptionalUnlessRequiredId<T>;
      await withStorageRetries(() => collection.insertOne(doc));
      return { id, n, until };
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
    }
    const existing = (await collection.findOne({ _id: id } as mongo.Filter<T>)) as NumberedLease | null;
    // Removed since the insert failed (its holder finished): the same number is free again.
    if (!existing) continue;
    if (existing.owner === owner) return { id, n, until: existing.until };
    if (existing.until.getTime() > now.getTime()) return null;
    n += 1;
  }
  throw new Error(`more than ${MAX_NUMBERS} expired leases on ${key}`);
}

/** Removes leases 1..n of `key` (by their holder, once what they guarded is settled). */
export async function dropNumberedLeases<T extends NumberedLease>(
  collection: mongo.Collection<T>,
  key: string,
  n: number,
): Promise<void> {
  const ids = Array.from({ length: n }, (_, i) => leaseId(key, i + 1));
  await withStorageRetries(() => collection.deleteMany({ _id: { $in: ids } } as mongo.Filter<T>));
}

export interface Lease {
  n: number;
  release(): Promise<void>;
}

/** What a release leaves of a lease at most: past it, a later number may be taken (see release below). */
const RELEASE_MARGIN_MS = 1_000;

/** Takes the lease on `key` for `ttlMs`, or returns null when another holder has it. */
export async function tryLease(
  model: Model<LeaseDoc>,
  key: string,
  ttlMs: number,
  now = new Date(),
): Promise<Lease | null> {
  const collection = model.collection as unknown as mongo.Collection<LeaseDoc>;
  const until = new Date(now.getTime() + ttlMs);
  const taken = await takeNumberedLease(collection, key, randomUUID(), now, until, { key });
  if (!taken) return null;
  return {
    n: taken.n,
    async release() {
      // Only while the lease lasts: once it has expired a later number may be held, and removing this one would let
      // a taker in beside it. An expired number stays until the holder of a later one drops it (takers pass over it).
      if (Date.now() < until.getTime() - Math.min(RELEASE_MARGIN_MS, ttlMs / 4))
        await dropNumberedLeases(collection, key, taken.n);
    },
  };
}

/**
 * Runs `fn` holding the lease on `key`, waiting for it up to `waitMs` (short pauses between tries). The lease lasts
 * `ttlMs`: `fn` must finish well within it (these are single read-change-write steps of milliseconds).
 */
export async function withLease<T>(
  model: Model<LeaseDoc>,
  key: string,
  fn: () => Promise<T>,
  options: { ttlMs?: number; waitMs?: number } = {},
): Promise<T> {
  const ttlMs = options.ttlMs ?? 30_000;
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  for (let pause = 20; ; pause = Math.min(pause * 2, 500)) {
    const lease = await tryLease(model, key, ttlMs);
    if (lease) {
      try {
        return await fn();
      } finally {
        await lease.release();
      }
    }
    if (Date.now() >= deadline) {
      throw new GatewayError('CONFLICT', `${key} is being changed by another request; try again`);
    }
    await new Promise((r) => setTimeout(r, pause));
  }
}
