import express, { type Request, type RequestHandler, type Response } from 'express';
import { GatewayError } from '../src/core/gateway-error';
import { truncateForEcho } from '../src/core/truncate';
import type { TransformReport } from '../src/transform';
import {
  declaredKind,
  kindMismatch,
  readBody,
  refuseContentEncoding,
  sniffDocumentKind,
  SNIFF_BYTES,
} from './read-body';

/*
 * Request and response helpers every route shares: query parameters, the document media types and bodies of the
 * generic endpoints, and the headers of a conversion. Route files import these, never each other.
 */

export const ACCEPTED = /^(application\/xml|text\/xml|application\/[a-z0-9.+-]+\+xml|application\/pdf)$/;

/**
 * A query parameter given at most once. One meaning for an empty value on every route: `?name=` (or only spaces) is
 * the same as leaving the parameter out.
 */
export function queryString(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new GatewayError('BAD_REQUEST', `query parameter ${name} must be given once`);
  return v.trim() === '' ? undefined : v;
}

/** 415 unless the body is XML or a PDF (the generic document endpoints: validate, transform). */
function mediaTypeOf(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export function requireDocumentContentType(req: Request): void {
  const type = mediaTypeOf(req);
  if (!ACCEPTED.test(type)) {
    const shown = truncateForEcho(type, 100) || '(none)';
    throw new GatewayError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Type "${shown}" is not accepted; send application/xml, text/xml or application/pdf`,
    );
  }
}

/**
 * The whole body of a generic document endpoint: bounded, not empty, not compressed, and not a PDF declared as XML
 * or XML declared as PDF (anything else that is not XML is left to format detection, which says what it found); a
 * refused one closes the connection.
 */
export async function readDocumentBody(req: Request, res: Response, limit: number): Promise<Buffer> {
  let body: Buffer;
  try {
    refuseContentEncoding(req);
    body = await readBody(req, limit);
  } catch (e) {
    res.set('Connection', 'close');
    throw e;
  }
  if (body.length === 0) throw new GatewayError('BAD_REQUEST', 'Request body is empty');
  const type = mediaTypeOf(req);
  const expected = declaredKind(type);
  const found = sniffDocumentKind(body.subarray(0, SNIFF_BYTES), true, expected) ?? 'other';
  if (found !== expected && found !== 'other') throw kindMismatch(type, found);
  return body;
}

/** What a conversion did, in headers: formats and how much could not be carried over (never silent). */
export function setTransformHeaders(res: Response, report: TransformReport): void {
  res.set({
    'X-Transform-Source-Format': report.source.id,
    'X-Transform-Target-Format': report.target.id,
    'X-Transform-Unmapped': String(report.unmapped.length),
    'X-Transform-Not-Carried': String(report.notCarried.length),
  });
}

/** A 400 naming the body field at fault (`details.field`). */
export function badField(message: string, field?: string): GatewayError {
  return new GatewayError('BAD_REQUEST', message, field ? { details: { field } } : {});
}

/**
 * A JSON body of at most `limit` (`64kb`): 415 unless it is application/json (`Send <what> as application/json`), 413
 * above the limit, 400 when it does not parse.
 */
export function jsonBody(limit: string, what: string): RequestHandler {
  const parse = express.json({ limit, strict: true });
  return (req, res, next) => {
    if (!req.is('application/json')) {
      next(new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Send ${what} as application/json`));
      return;
    }
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      next(
        (err as { type?: string }).type === 'entity.too.large'
          ? new GatewayError('PAYLOAD_TOO_LARGE', `The body is larger than ${limit}`)
          : badField('The body is not valid JSON'),
      );
    });
  };
}
