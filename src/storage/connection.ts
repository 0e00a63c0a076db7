import mongoose, { type Connection } from 'mongoose';
import { BlobStore } from './blob-store';
import { buildModels, type Models } from './models';

export interface Database {
  connection: Connection;
  models: Models;
  blobs: BlobStore;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * One connection per process. Indexes are built at start (Model.init) so the unique guards exist before the first
 * write; autoIndex is off to keep that explicit and awaited.
 */
export async function connectDatabase(uri: string, options: { dbName?: string | undefined } = {}): Promise<Database> {
  const connection = mongoose.createConnection(uri, {
    ...(options.dbName ? { dbName: options.dbName } : {}),
    autoIndex: false,
    autoCreate: true,
    serverSelectionTimeoutMS: 10_000,
  });
  await connection.asPromise();
  const models = buildModels(connection);
  await Promise.all(Object.values(models).map((m) => m.init().then(() => m.createIndexes())));
  const db = connection.db;
  if (!db) throw new Error('database handle missing after connect');
  const blobs = new BlobStore(db);
  return {
    connection,
    models,
    blobs,
    async ping() {
      try {
        await db.command({ ping: 1 });
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await connection.close();
    },
  };
}

export function isDuplicateKeyError(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 11000;
}
