import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import mongoose, { type Connection } from 'mongoose';
import { BlobStore, chunkId } from '../../src/storage/blob-store';
import { isGatewayError } from '../../src/core/gateway-error';
import { requireEnv, uniqueDbUri } from '../support/services';

type Db = InstanceType<typeof mongoose.mongo.Db>;
type CommandStartedEvent = InstanceType<typeof mongoose.mongo.CommandStartedEvent>;
interface Command {
  name: string;
  collection: unknown;
  filter: unknown;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** The bytes as a stream of pieces of the given sizes (uploads arrive in arbitrary pieces). */
function pieces(bytes: Buffer, size: number): Readable {
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
  return Readable.from(parts.length ? parts : [Buffer.alloc(0)]);
}
async function drain(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(p as Buffer);
  return Buffer.concat(parts);
}
async function failure(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return { ...(isGatewayError(e) ? { code: e.code } : {}), message: (e as Error).message };
  }
  throw new Error('expected a failure');
}

describe('BlobStore (chunk records keyed <blobId>:<n>) on the real database', () => {
  const CHUNK = 4096;
  let conn: Connection;
  let db: Db;
  let store: BlobStore;
  const commands: Command[] = [];

  beforeAll(async () => {
    const { mongodbUri } = requireEnv();
    const letters = randomUUID()
      .replace(/[^a-f]/g, '')
      .slice(0, 8);
    // Command monitoring lets the tests count what each call sends to the database.
    conn = await mongoose
      .createConnection(`${uniqueDbUri(mongodbUri, `blobstore${letters}`)}?monitorCommands=true`)
      .asPromise();
    db = conn.db!;
    conn.getClient().on('commandStarted', (e: CommandStartedEvent) => {
      const c = e.command as Record<string, unknown>;
      commands.push({
        name: e.commandName,
        collection: c[e.commandName],
        filter: c['filter'] ?? (Array.isArray(c['deletes']) ? (c['deletes'] as { q: unknown }[])[0]?.q : undefined),
      });
    });
    store = new BlobStore(db, { chunkSize: CHUNK });
  });
  afterAll(async () => {
    await conn.dropDatabase().catch(() => undefined);
    await conn.close();
  });

  const count = (collection: string, filter: Record<string, unknown> = {}) =>
    db.collection(collection).countDocuments(filter);
  const chunksOf = async (blobId: string) =>
    (
      await db
        .collection(store.chunksCollection)
        .find({}, { projection: { _id: 1 } })
        .toArray()
    ).filter((c) => String(c._id).startsWith(`${blobId}:`)).length;
  async function recording<T>(fn: () => Promise<T>): Promise<{ result: T; sent: Command[] }> {
    const from = commands.length;
    const result = await fn();
    return { result, sent: commands.slice(from) };
  }

  it.each([
    ['0 bytes', 0, 1],
    ['1 byte', 1, 1],
    ['exactly one chunk', CHUNK, 1000],
    ['one chunk and one byte', CHUNK + 1, CHUNK + 1],
    ['many chunks, pieces smaller than a chunk', CHUNK * 10 + 123, 1000],
    ['many chunks, one piece larger than several chunks', CHUNK * 7 + 5, CHUNK * 3 + 17],
  ])('round-trips %s', async (_name, size, piece) => {
    const bytes = randomBytes(size);
    const stored = await store.put(pieces(bytes, piece), {
      limit: 1024 * 1024,
      filename: 'invoice.xml',
      contentType: 'application/xml',
      metadata: { documentId: 'd1' },
    });
    expect(stored).toEqual({ blobId: expect.stringMatching(/^[0-9a-f]{24}$/), size, sha256: sha256(bytes) });

    const expectedChunks = size <= CHUNK ? 0 : Math.ceil(size / CHUNK);
    const file = await db.collection<{ _id: string }>(store.filesCollection).findOne({ _id: stored.blobId });
    expect(file).toMatchObject({
      size,
      chunkSize: CHUNK,
      chunks: expectedChunks,
      sha256: sha256(bytes),
      contentType: 'application/xml',
      filename: 'invoice.xml',
      metadata: { documentId: 'd1' },
    });
    expect((file as Record<string, unknown> | null)!['createdAt']).toBeInstanceOf(Date);
    // A blob that fits one chunk is kept in its file record; a larger one has exactly its chunk records.
    expect((file as Record<string, unknown> | null)!['data'] !== undefined).toBe(expectedChunks === 0);
    expect(await chunksOf(stored.blobId)).toBe(expectedChunks);

    const beats: number[] = [];
    const read = await store.read(stored.blobId, Number.MAX_SAFE_INTEGER, () => beats.push(1));
    expect(Buffer.compare(read, bytes)).toBe(0);
    expect(beats).toHaveLength(Math.max(1, expectedChunks));
    expect(Buffer.compare(await drain(store.open(stored.blobId)), bytes)).toBe(0);
  });

  it('stores a blob that fits one chunk with a single insert and reads it with a single keyed find', async () => {
    const bytes = randomBytes(CHUNK);
    const { result: stored, sent: writes } = await recording(() =>
      store.put(pieces(bytes, 700), { limit: 1 << 20, filename: 'x', contentType: 'application/xml' }),
    );
    expect(writes.map((c) => [c.name, c.collection])).toEqual([['insert', store.filesCollection]]);
    const { sent: reads } = await recording(() => store.read(stored.blobId));
    expect(reads).toEqual([{ name: 'find', collection: store.filesCollection, filter: { _id: stored.blobId } }]);
  });

  it('reads by exact _id only, and a read costs the same however many other blobs are stored', async () => {
    const bytes = randomBytes(CHUNK * 2 + 10);
    const probe = await store.put(pieces(bytes, 1000), {
      limit: 1 << 20,
      filename: 'probe',
      contentType: 'application/xml',
    });
    const expected: Command[] = [
      { name: 'find', collection: store.filesCollection, filter: { _id: probe.blobId } },
      ...[0, 1, 2].map((n) => ({
        name: 'find',
        collection: store.chunksCollection,
        filter: { _id: chunkId(probe.blobId, n) },
      })),
    ];
    const before = await recording(() => store.read(probe.blobId));
    expect(before.sent).toEqual(expected);

    // Other blobs of every shape, written before and after the probe.
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        store.put(pieces(randomBytes(i * 700), 512), {
          limit: 1 << 20,
          filename: 'other',
          contentType: 'application/xml',
        }),
      ),
    );
    const after = await recording(() => store.read(probe.blobId));
    expect(after.sent).toEqual(expected);
    expect(Buffer.compare(after.result, bytes)).toBe(0);
  });

  it('refuses an empty input when asked to, without writing anything', async () => {
    const { result, sent } = await recording(() =>
      failure(
        store.put(Readable.from([Buffer.alloc(0)]), {
          limit: 1 << 20,
          filename: 'x',
          contentType: 'application/xml',
          refuseEmpty: 'Request body is empty',
        }),
      ),
    );
    expect(result).toEqual({ code: 'BAD_REQUEST', message: 'Request body is empty' });
    expect(sent).toEqual([]);
    // One byte is not empty.
    await expect(
      store.put(Readable.from([Buffer.from('x')]), {
        limit: 1 << 20,
        filename: 'x',
        contentType: 'application/xml',
        refuseEmpty: 'empty',
      }),
    ).resolves.toMatchObject({ size: 1 });
  });

  it('keeps concurrent writes apart', async () => {
    const inputs = Array.from({ length: 12 }, (_, i) => randomBytes(i % 3 === 0 ? 100 + i : CHUNK * (i % 5) + 300 * i));
    const stored = await Promise.all(
      inputs.map((b, i) =>
        store.put(pieces(b, 333 + i * 97), { limit: 1 << 20, filename: `f${i}`, contentType: 'application/xml' }),
      ),
    );
    expect(new Set(stored.map((s) => s.blobId)).size).toBe(inputs.length);
    const read = await Promise.all(stored.map((s) => store.read(s.blobId)));
    read.forEach((r, i) => {
      expect(stored[i]!.sha256).toBe(sha256(inputs[i]!));
      expect(Buffer.compare(r, inputs[i]!)).toBe(0);
    });
  });

  it('refuses a body over the limit while it streams and removes the chunks already written (24 MiB, default chunk size)', async () => {
    const full = new BlobStore(db);
    const limit = 24 * 1024 * 1024;
    const [files, chunks] = [await count(full.filesCollection), await count(full.chunksCollection)];
    const piece = randomBytes(256 * 1024);
    let sent = 0;
    const body = new Readable({
      read() {
        // One piece past the limit; the writer must stop it, not the source running dry.
        if (sent > limit + piece.length) this.push(null);
        else {
          sent += piece.length;
          this.push(piece);
        }
      },
    });
    const { result, sent: ops } = await recording(() =>
      failure(full.put(body, { limit, filename: 'big', contentType: 'application/xml' })),
    );
    expect(result).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    // Chunks were really written before the crossing (so the cleanup had work to do)...
    const chunkInserts = ops.filter((c) => c.name === 'insert' && c.collection === full.chunksCollection).length;
    expect(chunkInserts).toBe(limit / full.chunkSize - 1);
    expect(ops.some((c) => c.name === 'insert' && c.collection === full.filesCollection)).toBe(false);
    // ...and none is left, nor any file record.
    expect([await count(full.filesCollection), await count(full.chunksCollection)]).toEqual([files, chunks]);
  }, 120_000);

  it('removes what was written when the source fails mid-stream (client gone)', async () => {
    const [files, chunks] = [await count(store.filesCollection), await count(store.chunksCollection)];
    let n = 0;
    const body = new Readable({
      read() {
        if (n++ < 5) this.push(randomBytes(CHUNK));
        else this.destroy(new Error('aborted'));
      },
    });
    expect(
      await failure(store.put(body, { limit: 1 << 20, filename: 'gone', contentType: 'application/xml' })),
    ).toMatchObject({ message: 'aborted' });
    expect([await count(store.filesCollection), await count(store.chunksCollection)]).toEqual([files, chunks]);
  });

  it('deletes a blob with its chunks; an unknown id is a no-op', async () => {
    const big = await store.put(pieces(randomBytes(CHUNK * 3 + 1), 2048), {
      limit: 1 << 20,
      filename: 'x',
      contentType: 'application/xml',
    });
    const small = await store.put(pieces(randomBytes(10), 10), {
      limit: 1 << 20,
      filename: 'x',
      contentType: 'application/xml',
    });
    expect(await chunksOf(big.blobId)).toBe(4);
    await store.delete(big.blobId);
    await store.delete(small.blobId);
    expect(await chunksOf(big.blobId)).toBe(0);
    expect(await count(store.filesCollection, { _id: { $in: [big.blobId, small.blobId] } })).toBe(0);
    await expect(store.delete(big.blobId)).resolves.toBeUndefined();
    expect(await failure(store.read(big.blobId))).toMatchObject({
      code: 'STORAGE_FAILED',
      message: expect.stringContaining('not found'),
    });
  });

  it('refuses a stored blob over maxBytes before reading any chunk', async () => {
    const stored = await store.put(pieces(randomBytes(CHUNK * 2), 4096), {
      limit: 1 << 20,
      filename: 'x',
      contentType: 'application/xml',
    });
    const { result, sent } = await recording(() => failure(store.read(stored.blobId, CHUNK * 2 - 1)));
    expect(result).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(sent).toHaveLength(1);
    await expect(store.read(stored.blobId, CHUNK * 2)).resolves.toHaveLength(CHUNK * 2);
  });

  describe('detects damaged stored bytes on read', () => {
    const chunkColl = () => db.collection<{ _id: string; data: Buffer }>(store.chunksCollection);
    const fileColl = () => db.collection<{ _id: string; data?: Buffer }>(store.filesCollection);
    const put = (bytes: Buffer) =>
      store.put(pieces(bytes, 1000), { limit: 1 << 20, filename: 'x', contentType: 'application/xml' });

    it('a changed chunk (same length): SHA-256 mismatch, also on the stream', async () => {
      const bytes = randomBytes(CHUNK * 2 + 1);
      const stored = await put(bytes);
      const altered = Buffer.from(bytes.subarray(CHUNK, CHUNK * 2));
      altered[17] = altered[17]! ^ 0xff;
      await chunkColl().updateOne({ _id: chunkId(stored.blobId, 1) }, { $set: { data: altered } });
      expect(await failure(store.read(stored.blobId))).toMatchObject({
        code: 'INTERNAL',
        message: expect.stringContaining('SHA-256'),
      });
      expect(await failure(drain(store.open(stored.blobId)))).toMatchObject({
        code: 'INTERNAL',
        message: expect.stringContaining('SHA-256'),
      });
    });

    it('a truncated or missing chunk', async () => {
      const stored = await put(randomBytes(CHUNK * 3));
      await chunkColl().updateOne({ _id: chunkId(stored.blobId, 0) }, { $set: { data: randomBytes(CHUNK - 1) } });
      expect(await failure(store.read(stored.blobId))).toMatchObject({
        code: 'INTERNAL',
        message: expect.stringContaining(`chunk 0 holds ${CHUNK - 1} bytes`),
      });
      await chunkColl().deleteOne({ _id: chunkId(stored.blobId, 0) });
      expect(await failure(store.read(stored.blobId))).toMatchObject({
        code: 'INTERNAL',
        message: expect.stringContaining('chunk 0 of 3 is missing'),
      });
    });

    it('changed inline bytes', async () => {
      const bytes = randomBytes(100);
      const stored = await put(bytes);
      const altered = Buffer.from(bytes);
      altered[0] = altered[0]! ^ 1;
      await fileColl().updateOne({ _id: stored.blobId }, { $set: { data: altered } });
      expect(await failure(store.read(stored.blobId))).toMatchObject({
        code: 'INTERNAL',
        message: expect.stringContaining('SHA-256'),
      });
    });
  });
});
