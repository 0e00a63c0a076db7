import { Transform, type TransformCallback } from 'node:stream';
import type { Request } from 'express';
import busboy from 'busboy';
import { GatewayError } from '../src/core/gateway-error';
import { truncateForEcho } from '../src/core/truncate';
import type { BlobStore, StoredBlob } from '../src/storage/blob-store';
import { declaredKind, kindMismatch, refuseContentEncoding, sniffDocumentKind, type DocumentKind } from './read-body';

export interface ReceivedUpload extends StoredBlob {
  contentType: string;
  filename: string | undefined;
}

const RAW_TYPES = /^(application\/xml|text\/xml|application\/[a-z0-9.+-]+\+xml|application\/pdf)$/;

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The error a client's early disconnect gives, as problem-details recognises it. */
function aborted(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

/**
 * Passes the bytes through unchanged once their start shows they are what was declared: XML (`<` after an optional
 * byte order mark and whitespace) or a PDF (`%PDF-` within the first 1024 bytes). Until then it holds the first
 * bytes back, so nothing of a refused body reaches storage; a mismatch fails the stream with a 415. With no declared
 * kind, XML and PDF are both accepted and `kind` says which it is.
 */
class HeadCheck extends Transform {
  /** The kind found, once known (an empty body counts as the expected kind: the store refuses it as empty). */
  readonly kind: Promise<DocumentKind>;
  private settle!: { resolve: (kind: DocumentKind) => void; reject: (e: Error) => void };
  private head: Buffer = Buffer.alloc(0);
  private decided = false;

  constructor(
    private readonly expected: DocumentKind | undefined,
    private readonly declared: string | undefined,
    private readonly onRefused: () => void,
  ) {
    super();
    this.kind = new Promise<DocumentKind>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Awaited by some callers only; a refusal also fails the stream, where the others see it.
    this.kind.catch(() => undefined);
    // Failures reach the caller through `kind` and the store's write; a stream nobody reads yet must not throw them.
    this.on('error', () => undefined);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.decided) {
      callback(null, chunk);
      return;
    }
    this.head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
    this.judge(false, callback);
  }

  override _flush(callback: TransformCallback): void {
    if (this.decided) callback();
    else if (this.head.length === 0) {
      this.decided = true;
      this.settle.resolve(this.expected ?? 'xml');
      callback();
    } else this.judge(true, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.decided) this.settle.reject(error ?? aborted());
    callback(error);
  }

  private judge(complete: boolean, callback: TransformCallback): void {
    const found = sniffDocumentKind(this.head, complete, this.expected ?? 'xml');
    if (found === undefined) {
      callback();
      return;
    }
    this.decided = true;
    const accepted = this.expected === undefined ? found !== 'other' : found === this.expected;
    if (!accepted || found === 'other') {
      const refusal =
        this.declared === undefined
          ? new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'The uploaded file is neither XML nor a PDF')
          : kindMismatch(this.declared, found);
      this.settle.reject(refusal);
      this.onRefused();
      callback(refusal);
      return;
    }
    this.settle.resolve(found);
    const head = this.head;
    this.head = Buffer.alloc(0);
    callback(null, head);
  }
}

/** The rest of a refused body will not be read: the connection closes after the answer instead. */
function closeAfterAnswer(req: Request): () => void {
  return () => req.res?.set('Connection', 'close');
}

/** `source` through a HeadCheck; a failure or early end of the source fails the check, and so the store's write. */
function checked(source: NodeJS.ReadableStream, check: HeadCheck, req: Request): HeadCheck {
  source.on('error', (e: Error) => check.destroy(e));
  source.pipe(check);
  req.on('close', () => {
    if (!req.complete) check.destroy(aborted());
  });
  return check;
}

/**
 * Streams the upload body into the blob store, raw (`application/xml`, `text/xml`, `+xml`, `application/pdf`) or as
 * the single file part of `multipart/form-data`. The size limit is enforced on the bytes as they arrive, before
 * anything is kept; a Content-Length over the limit is refused without reading at all. Refused before anything is
 * kept as well: a Content-Encoding (a compressed body would be stored compressed), a body whose first bytes are not
 * the declared type, and a second file part.
 */
export async function receiveUpload(
  req: Request,
  blobs: BlobStore,
  limit: number,
  metadata: Record<string, unknown>,
): Promise<ReceivedUpload> {
  refuseContentEncoding(req);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    throw new GatewayError(
      'PAYLOAD_TOO_LARGE',
      `Request body of ${declared} bytes exceeds the limit of ${limit} bytes`,
      { details: { limit } },
    );
  }
  const type = mediaType(req.headers['content-type']);
  if (RAW_TYPES.test(type)) {
    const contentType = req.headers['content-type'] ?? type;
    const check = checked(req, new HeadCheck(declaredKind(type), type, closeAfterAnswer(req)), req);
    const refuseEmpty = 'Request body is empty';
    const blob = await blobs.put(check, { limit, filename: 'document', contentType, metadata, refuseEmpty });
    return { ...blob, contentType, filename: undefined };
  }
  if (type === 'multipart/form-data') return receiveMultipart(req, blobs, limit, metadata);
  const shown = truncateForEcho(type, 100) || '(none)';
  throw new GatewayError(
    'UNSUPPORTED_MEDIA_TYPE',
    `Content-Type "${shown}" is not accepted; send application/xml or multipart/form-data with one file`,
  );
}

function receiveMultipart(
  req: Request,
  blobs: BlobStore,
  limit: number,
  metadata: Record<string, unknown>,
): Promise<ReceivedUpload> {
  return new Promise<ReceivedUpload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: 1, fileSize: limit + 1, fields: 20, parts: 40, fieldSize: 64 * 1024 },
      });
    } catch {
      reject(new GatewayError('BAD_REQUEST', 'multipart/form-data without a valid boundary'));
      return;
    }
    let stored: Promise<ReceivedUpload> | undefined;
    let current: HeadCheck | undefined;
    let failure: Error | undefined;
    let settled = false;
    let total = 0;

    /** Answers once: the stored file after the whole body was read, or the first failure with nothing kept. */
    const settle = (): void => {
      if (settled) return;
      settled = true;
      if (failure) {
        const err = failure;
        // A file already stored is removed again: nothing of a refused request stays.
        const cleanup = stored ? stored.then((b) => blobs.delete(b.blobId)).catch(() => undefined) : Promise.resolve();
        void cleanup.then(() => reject(err));
      } else if (!stored) reject(new GatewayError('BAD_REQUEST', 'multipart/form-data body has no file part'));
      else stored.then(resolve, reject);
    };
    const fail = (err: Error): void => {
      if (failure) return;
      failure = err;
      req.off('data', onData);
      req.unpipe(parser);
      // Failing the file stream makes the blob store drop what it wrote.
      current?.destroy(err);
      settle();
    };
    // The whole request counts towards the limit (spec 8: "including HTTP overhead").
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= limit) return;
      const message = `Request body exceeds the limit of ${limit} bytes`;
      fail(new GatewayError('PAYLOAD_TOO_LARGE', message, { details: { limit } }));
    };
    req.on('data', onData);
    parser.on('file', (_field, file, info) => {
      if (failure) {
        file.resume();
        return;
      }
      const typed = info.mimeType && info.mimeType !== 'application/octet-stream';
      const partType = typed ? mediaType(info.mimeType) : undefined;
      if (partType !== undefined && !RAW_TYPES.test(partType)) {
        file.resume();
        req.res?.set('Connection', 'close');
        fail(
          new GatewayError(
            'UNSUPPORTED_MEDIA_TYPE',
            `The file part's Content-Type "${truncateForEcho(partType, 100)}" is not accepted; ` +
              'send application/xml or application/pdf',
          ),
        );
        return;
      }
      const expected = partType === undefined ? undefined : declaredKind(partType);
      const check = new HeadCheck(expected, partType, closeAfterAnswer(req));
      current = checked(file, check, req);
      const filename = info.filename || undefined;
      stored = check.kind.then(async (kind) => {
        const contentType = partType ?? (kind === 'pdf' ? 'application/pdf' : 'application/xml');
        const refuseEmpty = 'The uploaded file is empty';
        const blob = await blobs.put(check, {
          limit,
          filename: info.filename || 'document',
          contentType,
          metadata,
          refuseEmpty,
        });
        return { ...blob, contentType, filename };
      });
      // Failures surface through settle(); this keeps an early one from counting as unhandled.
      stored.catch(() => undefined);
    });
    // busboy stops at the first file (limits.files) and reports any further one here.
    parser.on('filesLimit', () => {
      req.res?.set('Connection', 'close');
      const message = 'multipart/form-data body holds more than one file; send one document per request';
      fail(new GatewayError('BAD_REQUEST', message));
    });
    parser.on('error', () => fail(new GatewayError('BAD_REQUEST', 'Malformed multipart/form-data body')));
    parser.on('close', settle);
    req.on('error', fail);
    req.pipe(parser);
  });
}
