import { createHash, type Hash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import mongoose from 'mongoose';
import { GatewayError } from '../core/gateway-error';

type Db = InstanceType<typeof mongoose.mongo.Db>;
type Collection<T extends object> = InstanceType<typeof mongoose.mongo.Collection<T>>;
const { ObjectId, Binary } = mongoose.mongo;

export interface StoredBlob {
  blobId: string;
  size: number;
  sha256: string;
}

export interface PutOptions {
  limit: number;
  filename: string;
  contentType: string;
  metadata?: Record<string, unknown>;
  /** Refuse an empty input with this message (400) before anything is written, instead of storing it. */
  refuseEmpty?: string;
}

/**
 * One record per blob, written last: a blob exists once this record does. A blob that fits one chunk keeps its
 * bytes here (`data`, `chunks: 0`), so storing and reading it is a single operation; a larger one has `chunks`
 * records `<blobId>:0` … `<blobId>:<chunks - 1>` in the chunk collection.
 */
interface BlobFileRecord {
  _id: string;
  size: number;
  chunkSize: number;
  chunks: number;
  sha256: string;
  contentType: string;
  filename: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  data?: Buffer;
}

interface BlobChunkRecord {
  _id: string;
  data: Buffer;
}

export interface BlobStoreOptions {
  /** Bytes per chunk record; also the largest blob kept inline in its file record. */
  chunkSize?: number;
  filesCollection?: string;
  chunksCollection?: string;
}

export const DEFAULT_CHUNK_SIZE = 1024 * 1024;

export function chunkId(blobId: string, n: number): string {
  return `${blobId}:${n}`;
}

/** The driver hands binary fields back as BSON Binary unless told otherwise; accept both. */
function bytesOf(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Binary) {
    const v = value.value();
    return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  }
  throw new Error('stored blob data is not binary');
}

function corrupt(blobId: string, what: string): GatewayError {
  // Retrying cannot repair stored bytes; the failure must surface, not loop.
  return new GatewayError('INTERNAL', `Stored blob ${blobId} is corrupt: ${what}`, {
    retryable: false,
    details: { blobId },
  });
}

/**
 * Counts, hashes and limits the bytes as they arrive and writes them out chunk by chunk. Each chunk insert is
 * awaited before more bytes are accepted, so a slow database slows the sender instead of filling memory: at most one
 * chunk plus the piece that completed it is held.
 */
class ChunkWriter extends Writable {
  size = 0;
  /** Set when the input has ended, before the file record is written. */
  sha256 = '';
  /** Chunk inserts started (successful or not): what a failed upload must remove. */
  chunksStarted = 0;
  /** Whether the file record insert was started: a failed upload removes it only then. */
  fileStarted = false;
  private readonly hash: Hash = createHash('sha256');
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private inflight: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly blobId: string,
    private readonly limit: number,
    private readonly chunkSize: number,
    private readonly insertChunk: (record: BlobChunkRecord) => Promise<unknown>,
    private readonly insertFile: (fields: {
      size: number;
      chunks: number;
      sha256: string;
      data?: Buffer;
    }) => Promise<unknown>,
    private readonly refuseEmpty: string | undefined,
  ) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (error?: Error | null) => void): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      cb(
        new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds ${this.limit} bytes`, {
          details: { limit: this.limit },
        }),
      );
      return;
    }
    this.hash.update(chunk);
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // Only flush once more than a chunk is held: a blob of exactly one chunk stays inline.
    if (this.pendingBytes <= this.chunkSize) {
      cb();
      return;
    }
    this.track(this.flushFullChunks()).then(() => cb(), cb);
  }

  override _final(cb: (error?: Error | null) => void): void {
    this.track(this.finish()).then(() => cb(), cb);
  }

  /** Resolves once no insert is running any more, so a cleanup cannot race a late write. */
  idle(): Promise<void> {
    return this.inflight.then(
      () => undefined,
      () => undefined,
    );
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight = p;
    return p;
  }

  private async flushFullChunks(): Promise<void> {
    while (this.pendingBytes > this.chunkSize) await this.writeChunk(this.take(this.chunkSize));
  }

  private async finish(): Promise<void> {
    // Refused here rather than stored and deleted: a delete scans its collection on FerretDB.
    if (this.size === 0 && this.refuseEmpty !== undefined) throw new GatewayError('BAD_REQUEST', this.refuseEmpty);
    const sha256 = this.hash.digest('hex');
    this.sha256 = sha256;
    if (this.chunksStarted === 0) {
      this.fileStarted = true;
      await this.insertFile({ size: this.size, chunks: 0, sha256, data: this.take(this.pendingBytes) });
      return;
    }
    // Chunks were written only while more than a chunk was held, so a non-empty remainder is left here.
    await this.writeChunk(this.take(this.pendingBytes));
    this.fileStarted = true;
    await this.insertFile({ size: this.size, chunks: this.chunksStarted, sha256 });
  }

  private async writeChunk(data: Buffer): Promise<void> {
    const n = this.chunksStarted++;
    await this.insertChunk({ _id: chunkId(this.blobId, n), data });
  }

  /** Removes the first `n` held bytes as one buffer, copying only what it takes. */
  private take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let offset = 0;
    while (offset < n) {
      const head = this.pending[0]!;
      const k = Math.min(head.length, n - offset);
      head.copy(out, offset, 0, k);
      offset += k;
      if (k === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(k);
    }
    this.pendingBytes -= n;
    return out;
  }
}

/**
 * Document bytes, stored the same way on MongoDB and FerretDB: a file record per blob and chunk records keyed
 * `<blobId>:<n>`. Reads find every record by its whole `_id`, the one filter FerretDB's SQLite backend answers from
 * its key; GridFS's `{ files_id }` chunk query made it scan every chunk ever stored (docs/decisions.md, "Blob
 * store"). Uploads stream in with backpressure; a body over the limit, or any failure while writing, removes what
 * was written.
 */
export class BlobStore {
  readonly chunkSize: number;
  readonly filesCollection: string;
  readonly chunksCollection: string;
  private readonly files: Collection<BlobFileRecord>;
  private readonly chunks: Collection<BlobChunkRecord>;

  constructor(db: Db, options: BlobStoreOptions = {}) {
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    if (!Number.isInteger(this.chunkSize) || this.chunkSize < 1)
      throw new Error(`chunkSize must be a positive integer, got ${this.chunkSize}`);
    this.filesCollection = options.filesCollection ?? 'blobs';
    this.chunksCollection = options.chunksCollection ?? 'blobchunks';
    this.files = db.collection<BlobFileRecord>(this.filesCollection);
    this.chunks = db.collection<BlobChunkRecord>(this.chunksCollection);
  }

  async put(source: Readable, options: PutOptions): Promise<StoredBlob> {
    const blobId = new ObjectId().toHexString();
    const writer = new ChunkWriter(
      blobId,
      options.limit,
      this.chunkSize,
      (record) => this.chunks.insertOne(record),
      (fields) =>
        this.files.insertOne({
          _id: blobId,
          size: fields.size,
          chunkSize: this.chunkSize,
          chunks: fields.chunks,
          sha256: fields.sha256,
          contentType: options.contentType,
          filename: options.filename,
          metadata: options.metadata ?? {},
          createdAt: new Date(),
          ...(fields.data ? { data: fields.data } : {}),
        }),
      options.refuseEmpty,
    );
    try {
      await pipeline(source, writer);
    } catch (e) {
      await writer.idle();
      // A file record whose insert was sent goes too: it may have reached the database although the reply did not.
      await this.remove(blobId, writer.chunksStarted, writer.fileStarted).catch(() => undefined);
      throw e;
    }
    return { blobId, size: writer.size, sha256: writer.sha256 };
  }

  /** The bytes as a stream, chunk by chunk; it fails if they do not match the stored size and SHA-256. */
  open(blobId: string): Readable {
    return Readable.from(this.iterate(blobId), { objectMode: false });
  }

  /**
   * The whole blob in memory (the worker parses documents whole). Refuses a blob over `maxBytes` before reading its
   * chunks; `onChunk` runs after each chunk read (activity heartbeats).
   */
  async read(blobId: string, maxBytes = Number.MAX_SAFE_INTEGER, onChunk?: () => void): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of this.iterate(blobId, maxBytes)) {
      onChunk?.();
      parts.push(part);
    }
    return Buffer.concat(parts);
  }

  /** The metadata the blob was stored with, or null when it does not exist. */
  async metadata(blobId: string): Promise<Record<string, unknown> | null> {
    const file = await this.files.findOne({ _id: blobId }, { projection: { metadata: 1 } });
    return file ? (file.metadata ?? {}) : null;
  }

  /** Removes the blob: its file record first (so it stops existing), then its chunks. Unknown ids are a no-op. */
  async delete(blobId: string): Promise<void> {
    const file = await this.files.findOne({ _id: blobId }, { projection: { chunks: 1 } });
    if (!file) return;
    await this.remove(blobId, file.chunks, true);
  }

  /**
   * Removes many blobs nothing refers to any more (retention deletes their records first) in three statements
   * (deletes scan the whole collection on FerretDB 1.24, so one per batch, not per blob): their chunks first, then the
   * file records that say how many chunks there are, so a removal cut short is finished by repeating it. Unknown ids
   * are skipped.
   */
  async deleteAll(blobIds: readonly string[]): Promise<void> {
    if (blobIds.length === 0) return;
    const files = await this.files.find({ _id: { $in: [...blobIds] } }, { projection: { chunks: 1 } }).toArray();
    if (files.length === 0) return;
    const chunkIds = files.flatMap((f) => Array.from({ length: f.chunks }, (_, n) => chunkId(f._id, n)));
    if (chunkIds.length > 0) await this.chunks.deleteMany({ _id: { $in: chunkIds } });
    await this.files.deleteMany({ _id: { $in: files.map((f) => f._id) } });
  }

  /** Ids of the blobs stored as conversions of these (their metadata's `convertedFrom`). */
  async derivedFrom(blobIds: readonly string[]): Promise<string[]> {
    if (blobIds.length === 0) return [];
    const docs = await this.files
      .find({ 'metadata.convertedFrom': { $in: [...blobIds] } }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((d) => d._id);
  }

  /**
   * Ids of blobs stored before `before`, in storage order after `after` (ids are ObjectIds in hex: they sort by
   * creation time), at most `limit`. For reconciliation, which pages through them.
   */
  async listIds(options: { before: Date; after?: string | undefined; limit: number }): Promise<string[]> {
    const upper = ObjectId.createFromTime(Math.floor(options.before.getTime() / 1000)).toHexString();
    const range = options.after ? { $gt: options.after, $lt: upper } : { $lt: upper };
    const docs = await this.files
      .find({ _id: range }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(options.limit)
      .toArray();
    return docs.map((d) => d._id);
  }

  /**
   * Blob ids that have chunks but no file record, among chunks of blobs begun before `before` (an upload that
   * died while writing). Pages like listIds; returns the last chunk id seen so the caller can go on from it.
   */
  async listChunkOrphans(options: {
    before: Date;
    after?: string | undefined;
    limit: number;
  }): Promise<{ blobIds: string[]; scanned: number; last?: string }> {
    const upper = ObjectId.createFromTime(Math.floor(options.before.getTime() / 1000)).toHexString();
    const range = options.after ? { $gt: options.after, $lt: upper } : { $lt: upper };
    const docs = await this.chunks
      .find({ _id: range }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(options.limit)
      .toArray();
    const owners = [...new Set(docs.map((d) => d._id.slice(0, d._id.lastIndexOf(':'))))];
    const withFile = new Set(
      (await this.files.find({ _id: { $in: owners } }, { projection: { _id: 1 } }).toArray()).map((f) => f._id),
    );
    const last = docs[docs.length - 1]?._id;
    return { blobIds: owners.filter((id) => !withFile.has(id)), scanned: docs.length, ...(last ? { last } : {}) };
  }

  /** Removes the chunks of a blob that has no file record (see listChunkOrphans). */
  async deleteOrphanChunks(blobId: string): Promise<void> {
    if (await this.files.findOne({ _id: blobId }, { projection: { _id: 1 } })) return;
    await this.chunks.deleteMany({ _id: { $gt: `${blobId}:`, $lt: `${blobId};` } });
  }

  /**
   * Deletes scan the whole collection on FerretDB 1.24 whatever the filter (measured: docs/decisions.md), so the
   * chunks go in one statement; deletes happen only on failed, refused or replaced uploads.
   */
  private async remove(blobId: string, chunkCount: number, withFile: boolean): Promise<void> {
    if (withFile) await this.files.deleteOne({ _id: blobId });
    if (chunkCount === 0) return;
    const ids = Array.from({ length: chunkCount }, (_, n) => chunkId(blobId, n));
    await this.chunks.deleteMany({ _id: { $in: ids } });
  }

  private async *iterate(blobId: string, maxBytes = Number.MAX_SAFE_INTEGER): AsyncGenerator<Buffer> {
    const file = await this.files.findOne({ _id: blobId }, { promoteBuffers: true });
    if (!file) throw new GatewayError('STORAGE_FAILED', `Stored blob ${blobId} not found`, { details: { blobId } });
    if (file.size > maxBytes)
      throw new GatewayError('PAYLOAD_TOO_LARGE', `Stored document of ${file.size} bytes exceeds ${maxBytes} bytes`, {
        details: { limit: maxBytes },
      });
    const hash = createHash('sha256');
    let size = 0;
    const check = (part: Buffer, expected: number, what: string): Buffer => {
      if (part.length !== expected) throw corrupt(blobId, `${what} holds ${part.length} bytes, expected ${expected}`);
      size += part.length;
      hash.update(part);
      return part;
    };
    if (file.chunks === 0) {
      if (file.data === undefined) throw corrupt(blobId, 'no inline data and no chunks');
      yield check(bytesOf(file.data), file.size, 'inline data');
    } else {
      for (let n = 0; n < file.chunks; n++) {
        const chunk = await this.chunks.findOne({ _id: chunkId(blobId, n) }, { promoteBuffers: true });
        if (!chunk) throw corrupt(blobId, `chunk ${n} of ${file.chunks} is missing`);
        const expected = n < file.chunks - 1 ? file.chunkSize : file.size - file.chunkSize * (file.chunks - 1);
        yield check(bytesOf(chunk.data), expected, `chunk ${n}`);
      }
    }
    if (size !== file.size) throw corrupt(blobId, `read ${size} bytes, expected ${file.size}`);
    if (hash.digest('hex') !== file.sha256) throw corrupt(blobId, 'SHA-256 does not match');
  }
}
