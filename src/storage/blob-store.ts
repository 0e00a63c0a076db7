import { createHash } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import mongoose from 'mongoose';
import { GatewayError } from '../core/gateway-error';

type Db = InstanceType<typeof mongoose.mongo.Db>;
const { ObjectId, GridFSBucket } = mongoose.mongo;

export interface StoredBlob {
  blobId: string;
  size: number;
  sha256: string;
}

/** Counts and hashes bytes as they pass; fails the stream the moment the limit is crossed. */
class LimitAndHash extends Transform {
  size = 0;
  private readonly hash = createHash('sha256');
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      cb(new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds ${this.limit} bytes`, { details: { limit: this.limit } }));
      return;
    }
    this.hash.update(chunk);
    cb(null, chunk);
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * Document bytes live in GridFS (MongoDB and FerretDB both serve it). Uploads stream straight in: nothing is
 * buffered whole, and a body over the limit leaves no chunks behind.
 */
export class BlobStore {
  private readonly bucket: InstanceType<typeof GridFSBucket>;

  constructor(
    private readonly db: Db,
    private readonly bucketName = 'documents',
  ) {
    this.bucket = new GridFSBucket(db, { bucketName, chunkSizeBytes: 255 * 1024 });
  }

  async put(source: Readable, options: { limit: number; filename: string; contentType: string; metadata?: Record<string, unknown> }): Promise<StoredBlob> {
    const id = new ObjectId();
    const counter = new LimitAndHash(options.limit);
    const upload = this.bucket.openUploadStreamWithId(id, options.filename, {
      metadata: { ...(options.metadata ?? {}), contentType: options.contentType },
    });
    try {
      await pipeline(source, counter, upload);
    } catch (e) {
      await this.delete(id.toHexString()).catch(() => undefined);
      throw e;
    }
    return { blobId: id.toHexString(), size: counter.size, sha256: counter.digest() };
  }

  open(blobId: string): Readable {
    return this.bucket.openDownloadStream(new ObjectId(blobId));
  }

  async read(blobId: string, maxBytes = Number.MAX_SAFE_INTEGER, onChunk?: () => void): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of this.open(blobId)) {
      onChunk?.();
      size += (chunk as Buffer).length;
      if (size > maxBytes) throw new GatewayError('PAYLOAD_TOO_LARGE', `Stored document exceeds ${maxBytes} bytes`);
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }

  async delete(blobId: string): Promise<void> {
    try {
      await this.bucket.delete(new ObjectId(blobId));
    } catch (e) {
      // A partial upload may have written chunks but no files entry; remove those directly.
      if (String((e as Error).message).includes('File not found')) {
        await this.db.collection(`${this.bucketName}.chunks`).deleteMany({ files_id: new ObjectId(blobId) });
        return;
      }
      throw e;
    }
  }
}
