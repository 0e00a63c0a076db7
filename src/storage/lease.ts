import { randomUUID } from 'node:crypto';
import type { Model } from 'mongoose';
import { GatewayError } from '../core/gateway-error';
import { isDuplicateKeyError } from './connection';
import type { LeaseDoc } from './lease.schema';

export type { LeaseDoc } from './lease.schema';
export { buildLeaseModel } from './lease.schema';

export interface Lease {
  n: number;
  release(): Promise<void>;
}

/** Takes the lease on `key` for `ttlMs`, or returns null when another holder has it. */
export async function tryLease(
  model: Model<LeaseDoc>,
  key: string,
  ttlMs: number,
  now = new Date(),
): Promise<Lease | null> {
  const latest = await model.find({ key }).sort({ n: -1 }).limit(1).lean<LeaseDoc[]>().exec();
  const last = latest[0];
  if (last && last.releasedAt === null && last.until.getTime() > now.getTime()) return null;
  const n = (last?.n ?? 0) + 1;
  const holder = randomUUID();
  const _id = `${key}#${n}`;
  try {
    await model.create({ _id, key, n, holder, until: new Date(now.getTime() + ttlMs), releasedAt: null });
  } catch (e) {
    if (isDuplicateKeyError(e)) return null;
    throw e;
  }
  return {
    n,
    async release() {
      await model.updateOne({ _id }, { $set: { releasedAt: new Date() } }).exec();
      // Earlier numbers are history: a taker reads only the highest.
      if (n > 1) await model.deleteMany({ key, n: { $lt: n } }).exec();
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
