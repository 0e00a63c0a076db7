/**
 * The one error type of the gateway. Every failure the gateway means to report carries a stable code; the HTTP edge
 * maps it to problem+json (api/problem-details.ts) and the activity edge to ApplicationFailure
 * (activities/to-application-failure.ts). Pure: importable by workflows.
 */
export const GATEWAY_ERROR_CODES = {
  // 400
  BAD_REQUEST: { status: 400, retryable: false, title: 'Bad request' },
  INVALID_DOCUMENT_ID: { status: 400, retryable: false, title: 'Invalid X-Service-DocumentId' },
  INVALID_XML: { status: 400, retryable: false, title: 'Malformed XML' },
  UNSAFE_XML: { status: 400, retryable: false, title: 'Unsafe XML' },
  UNKNOWN_FORMAT: { status: 400, retryable: false, title: 'Document format not recognised' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false, title: 'Unsupported media type' },
  // 401 / 403 / 404
  UNAUTHORIZED: { status: 401, retryable: false, title: 'Unauthorized' },
  INVALID_SUBSCRIPTION_KEY: { status: 401, retryable: false, title: 'Invalid Subscription-Key' },
  FORBIDDEN: { status: 403, retryable: false, title: 'Forbidden' },
  PARTY_NOT_ACCESSIBLE: { status: 403, retryable: false, title: 'Party not accessible' },
  NOT_FOUND: { status: 404, retryable: false, title: 'Not found' },
  DOCUMENT_NOT_FOUND: { status: 404, retryable: false, title: 'Document not found' },
  // 409 / 413 / 429
  DOCUMENT_ID_CONFLICT: { status: 409, retryable: false, title: 'Document already processed' },
  CONFLICT: { status: 409, retryable: false, title: 'Conflict' },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, title: 'Payload too large' },
  RATE_LIMITED: { status: 429, retryable: true, title: 'Too many requests' },
  // 422
  UNPROCESSABLE: { status: 422, retryable: false, title: 'Unprocessable document' },
  // 5xx
  NOT_IMPLEMENTED: { status: 501, retryable: false, title: 'Not implemented' },
  DEPENDENCY_UNAVAILABLE: { status: 503, retryable: true, title: 'Dependency unavailable' },
  WORKFLOW_START_FAILED: { status: 503, retryable: true, title: 'Could not start processing' },
  STORAGE_FAILED: { status: 503, retryable: true, title: 'Storage unavailable' },
  INTERNAL: { status: 500, retryable: true, title: 'Internal error' },
} as const satisfies Record<string, { status: number; retryable: boolean; title: string }>;

export type GatewayErrorCode = keyof typeof GATEWAY_ERROR_CODES;

export interface GatewayErrorOptions {
  /** Extra members for the problem body (e.g. `documentId` on a 409, `errors` on a validation failure). */
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Overrides the code's default retry classification at the activity edge. */
  retryable?: boolean;
}

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly retryable: boolean;

  constructor(code: GatewayErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.details = options.details;
    this.retryable = options.retryable ?? GATEWAY_ERROR_CODES[code].retryable;
  }

  get status(): number {
    return GATEWAY_ERROR_CODES[this.code].status;
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}
