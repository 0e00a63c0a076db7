import { GatewayError, type GatewayErrorCode } from '../core/gateway-error';

/**
 * Why a Peppol operation failed, in terms an operator (and a retry policy) can act on. The GatewayError code carries
 * the HTTP / retry classification; `reason` is the precise Peppol cause and is stable (tests and logs rely on it).
 */
export type PeppolErrorReason =
  // identifiers
  | 'invalid-identifier'
  // SBDH (the part after the colon mirrors the peppol-commons reader error ids where one exists)
  | `sbdh:${SbdhErrorCode}`
  // SML / DNS
  | 'participant-not-registered'
  | 'no-matching-smp-service'
  | 'dns-failure'
  // SMP
  | 'participant-unknown'
  | 'document-type-not-supported'
  | 'process-not-supported'
  | 'transport-profile-not-supported'
  | 'endpoint-not-active'
  | 'smp-unreachable'
  | 'smp-response-invalid'
  | 'smp-redirect-invalid'
  | 'smp-not-https'
  | 'smp-signature-invalid'
  | 'smp-certificate-untrusted'
  | 'endpoint-certificate-invalid'
  // keys and certificates
  | 'certificate-invalid'
  | 'key-material-invalid';

export type SbdhErrorCode =
  | 'invalid-sbd-xml'
  | 'missing-sbdh'
  | 'invalid-header-version'
  | 'invalid-sender-count'
  | 'invalid-sender-authority'
  | 'invalid-sender-value'
  | 'invalid-receiver-count'
  | 'invalid-receiver-authority'
  | 'invalid-receiver-value'
  | 'missing-document-identification'
  | 'business-scope-missing'
  | 'invalid-scope'
  | 'invalid-scope-count'
  | 'duplicate-scope'
  | 'invalid-document-type-identifier'
  | 'missing-document-type-identifier'
  | 'invalid-process-identifier'
  | 'missing-process-identifier'
  | 'invalid-country-c1'
  | 'missing-country-c1'
  | 'invalid-mls-to'
  | 'invalid-mls-type'
  | 'missing-business-message'
  | 'invalid-business-message'
  | 'invalid-standard'
  | 'invalid-type-version'
  | 'invalid-type'
  | 'invalid-instance-identifier'
  | 'invalid-creation-date-time';

export interface PeppolErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  retryable?: boolean;
}

export class PeppolError extends GatewayError {
  readonly reason: PeppolErrorReason;

  constructor(code: GatewayErrorCode, reason: PeppolErrorReason, message: string, options: PeppolErrorOptions = {}) {
    super(code, message, {
      details: { reason, ...(options.details ?? {}) },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
      ...(options.retryable === undefined ? {} : { retryable: options.retryable }),
    });
    this.name = 'PeppolError';
    this.reason = reason;
  }
}

export function isPeppolError(e: unknown): e is PeppolError {
  return e instanceof PeppolError;
}
