import type { mongo } from 'mongoose';
import { isDuplicateKeyError } from '../connection';
import type { Models } from '../models';
import { withStorageRetries } from '../retry';
import type { HookSecretDoc } from './hook.schema';

export type { HookSecretDoc } from './hook.schema';

export const hookSecretId = (hookId: string, version: number): string => `${hookId}:${version}`;

/** Versions of hooks' secrets (rotations): keyed inserts, never updated, read by key. */
export class HookSecretRepository {
  constructor(private readonly models: Models) {}

  /** 'exists' when the version was taken already (a concurrent or earlier, unfinished rotation). */
  async insert(doc: HookSecretDoc): Promise<'inserted' | 'exists'> {
    try {
      await withStorageRetries(() =>
        (this.models.HookSecret.collection as unknown as mongo.Collection<HookSecretDoc>).insertOne({ ...doc }),
      );
      return 'inserted';
    } catch (e) {
      if (isDuplicateKeyError(e)) return 'exists';
      throw e;
    }
  }

  async get(hookId: string, version: number): Promise<HookSecretDoc | null> {
    return this.models.HookSecret.findById(hookSecretId(hookId, version)).lean<HookSecretDoc>().exec();
  }
}
