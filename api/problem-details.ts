import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { GATEWAY_ERROR_CODES, GatewayError, isGatewayError } from '../src/core/gateway-error';
import type { Logger } from '../src/observability/logger';
import { truncateForEcho, truncateMessage } from '../src/core/truncate';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  requestId: string;
  [extra: string]: unknown;
}

/** Stable documentation anchor per code, so `type` is a real, dereferenceable identifier. */
function typeUri(code: string): string {
  return `https://invoice-gateway.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

export function requestIdOf(req: Request): string {
  const id = (req as Request & { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : '';
}

/**
 * Details as given, with every string value bounded: they often quote the request or document (a root element name,
 * a customization id), which a hostile client can make megabytes long.
 */
function boundedDetails(details: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!details) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    out[key] = typeof value === 'string' ? truncateForEcho(value) : value;
  }
  return out;
}

export function problemFromGatewayError(err: GatewayError, req: Request): ProblemBody {
  const meta = GATEWAY_ERROR_CODES[err.code];
  return {
    ...boundedDetails(err.details),
    type: typeUri(err.code),
    title: meta.title,
    status: meta.status,
    // Messages may quote the document; their own parts are bounded where they are written, the whole here.
    detail: truncateMessage(err.message),
    // The path only: a query string may carry a credential (e.g. a misplaced access_token).
    instance: req.path,
    code: err.code,
    requestId: requestIdOf(req),
  };
}

/** Body-parser style errors carry `status`/`type`; map the ones a client can cause to 4xx problems. */
function fromHttpError(err: unknown): GatewayError | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { status?: unknown; type?: unknown; message?: unknown };
  if (e.type === 'entity.too.large')
    return new GatewayError('PAYLOAD_TOO_LARGE', 'Request body exceeds the size limit');
  if (e.type === 'entity.parse.failed') return new GatewayError('BAD_REQUEST', 'Request body could not be parsed');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new GatewayError('BAD_REQUEST', typeof e.message === 'string' ? e.message : 'Bad request');
  }
  return undefined;
}

const CLIENT_GONE = new Set(['ECONNRESET', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'EPIPE']);

function clientWentAway(req: Request, err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = e && typeof e.code === 'string' ? e.code : '';
  return (
    (req.destroyed || req.socket?.destroyed === true) &&
    (CLIENT_GONE.has(code) || (e !== null && e?.message === 'aborted'))
  );
}

/**
 * The HTTP edge of GatewayError: problem+json (RFC 9457). Unknown errors are logged with their stack and answered
 * with a body free of internals.
 */
export function problemDetailsHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    if (clientWentAway(req, err)) {
      // Nobody is left to answer; not a server error.
      logger.info({ requestId: requestIdOf(req) }, 'client closed the connection before the response');
      res.destroy();
      return;
    }
    const known = isGatewayError(err) ? err : fromHttpError(err);
    const gatewayError = known ?? new GatewayError('INTERNAL', 'An internal error occurred');
    if (!known) logger.error({ err, requestId: requestIdOf(req) }, 'unhandled error');
    else if (gatewayError.status >= 500) logger.warn({ err, requestId: requestIdOf(req) }, gatewayError.message);
    const body = problemFromGatewayError(gatewayError, req);
    res.status(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
  };
}

/** 404 for any path no route claimed, in the same problem shape. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new GatewayError('NOT_FOUND', `No route for ${req.method} ${req.path}`));
};
