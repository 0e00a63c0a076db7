import type { Request } from 'express';
import busboy from 'busboy';
import { GatewayError } from '../src/core/gateway-error';
import type { BlobStore, StoredBlob } from '../src/storage/blob-store';

export interface ReceivedUpload extends StoredBlob {
  contentType: string;
  filename: string | undefined;
}

const RAW_TYPES = /^(application\/xml|text\/xml|application\/[a-z0-9.+-]+\+xml|application\/pdf)$/;

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Streams the upload body into the blob store, raw (`application/xml`, `text/xml`, `+xml`, `application/pdf`) or as
 * the single file part of `multipart/form-data`. The size limit is enforced on the bytes as they arrive, before
 * anything is kept; a Content-Length over the limit is refused without reading at all.
 */
export async function receiveUpload(req: Request, blobs: BlobStore, limit: number, metadata: Record<string, unknown>): Promise<ReceivedUpload> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    throw new GatewayError('PAYLOAD_TOO_LARGE', `Request body of ${declared} bytes exceeds the limit of ${limit} bytes`, { details: { limit } });
  }
  const type = mediaType(req.headers['content-type']);
  if (RAW_TYPES.test(type)) {
    const contentType = req.headers['content-type'] ?? type;
    const blob = await blobs.put(req, { limit, filename: 'document', contentType, metadata, refuseEmpty: 'Request body is empty' });
    return { ...blob, contentType, filename: undefined };
  }
  if (type === 'multipart/form-data') return receiveMultipart(req, blobs, limit, metadata);
  throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Content-Type "${type || '(none)'}" is not accepted; send application/xml or multipart/form-data with one file`);
}

function receiveMultipart(req: Request, blobs: BlobStore, limit: number, metadata: Record<string, unknown>): Promise<ReceivedUpload> {
  return new Promise<ReceivedUpload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: limit + 1, fields: 20, parts: 40, fieldSize: 64 * 1024 } });
    } catch {
      reject(new GatewayError('BAD_REQUEST', 'multipart/form-data without a valid boundary'));
      return;
    }
    let seenFile = false;
    let current: NodeJS.ReadableStream & { destroy(e?: Error): void } | undefined;
    let total = 0;
    // The whole request counts towards the limit (spec 8: "including HTTP overhead").
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= limit) return;
      req.off('data', onData);
      req.unpipe(parser);
      const tooLarge = new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes`, { details: { limit } });
      // Failing the file stream makes the blob store drop what it wrote; the promise then rejects through it.
      if (current) current.destroy(tooLarge);
      else reject(tooLarge);
    };
    req.on('data', onData);
    parser.on('file', (_field, file, info) => {
      if (seenFile) {
        file.resume();
        return;
      }
      seenFile = true;
      current = file;
      const contentType = info.mimeType && info.mimeType !== 'application/octet-stream' ? info.mimeType : 'application/xml';
      blobs
        .put(file, { limit, filename: info.filename || 'document', contentType, metadata, refuseEmpty: 'The uploaded file is empty' })
        .then((blob) => resolve({ ...blob, contentType, filename: info.filename || undefined }))
        .catch(reject);
    });
    parser.on('error', () => reject(new GatewayError('BAD_REQUEST', 'Malformed multipart/form-data body')));
    parser.on('close', () => {
      if (!seenFile) reject(new GatewayError('BAD_REQUEST', 'multipart/form-data body has no file part'));
    });
    req.on('error', reject);
    req.pipe(parser);
  });
}
