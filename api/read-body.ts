import type { Request } from 'express';
import { GatewayError } from '../src/core/gateway-error';

/**
 * A whole request body held in memory, refused above `limit` bytes as it arrives (for endpoints that keep nothing or
 * parse the whole message: validate, transform, AS4). Uploads stream to storage instead (upload-body.ts).
 */
export function readBody(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(new GatewayError('PAYLOAD_TOO_LARGE', `Request body of ${declared} bytes exceeds the limit of ${limit} bytes`, { details: { limit } }));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes`, { details: { limit } }));
        return;
      }
      chunks.push(chunk);
    };
    let ended = false;
    req.on('data', onData);
    req.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
    // A client that goes away mid-body must not leave the request waiting for an end that never comes.
    req.on('close', () => {
      if (!ended) reject(new GatewayError('BAD_REQUEST', 'Request body incomplete: the connection closed'));
    });
  });
}
