/**
 * ebMS 3 error codes (core §6.7, AS4 §3.6) as the receiver reports them in an eb:Error signal. A processing step that
 * refuses a message throws EbmsError; the receiver turns it into the signal (and never into a receipt).
 */
import { GatewayError, type GatewayErrorCode } from '../../core/gateway-error';

export const EBMS_ERRORS = {
  'EBMS:0001': { shortDescription: 'ValueNotRecognized', severity: 'failure', category: 'Content' },
  'EBMS:0002': { shortDescription: 'FeatureNotSupported', severity: 'warning', category: 'Content' },
  'EBMS:0003': { shortDescription: 'ValueInconsistent', severity: 'failure', category: 'Content' },
  'EBMS:0004': { shortDescription: 'Other', severity: 'failure', category: 'Content' },
  'EBMS:0005': { shortDescription: 'ConnectionFailure', severity: 'warning', category: 'Communication' },
  'EBMS:0006': { shortDescription: 'EmptyMessagePartitionChannel', severity: 'failure', category: 'Communication' },
  'EBMS:0007': { shortDescription: 'MimeInconsistency', severity: 'failure', category: 'Unpackaging' },
  'EBMS:0008': { shortDescription: 'FeatureNotSupportedInconsistency', severity: 'failure', category: 'Unpackaging' },
  'EBMS:0009': { shortDescription: 'InvalidHeader', severity: 'failure', category: 'Unpackaging' },
  'EBMS:0010': { shortDescription: 'ProcessingModeMismatch', severity: 'failure', category: 'Processing' },
  'EBMS:0011': { shortDescription: 'ExternalPayloadError', severity: 'failure', category: 'Processing' },
  'EBMS:0101': { shortDescription: 'FailedAuthentication', severity: 'failure', category: 'Processing' },
  'EBMS:0102': { shortDescription: 'FailedDecryption', severity: 'failure', category: 'Processing' },
  'EBMS:0103': { shortDescription: 'PolicyNoncompliance', severity: 'failure', category: 'Processing' },
  'EBMS:0201': { shortDescription: 'DysfunctionalReliability', severity: 'failure', category: 'Processing' },
  'EBMS:0202': { shortDescription: 'DeliveryFailure', severity: 'failure', category: 'Communication' },
  'EBMS:0301': { shortDescription: 'MissingReceipt', severity: 'failure', category: 'Communication' },
  'EBMS:0302': { shortDescription: 'InvalidReceipt', severity: 'failure', category: 'Communication' },
  'EBMS:0303': { shortDescription: 'DecompressionFailure', severity: 'failure', category: 'Communication' },
} as const;

export type EbmsErrorCode = keyof typeof EBMS_ERRORS;

export class EbmsError extends GatewayError {
  readonly ebmsCode: EbmsErrorCode;
  /** Goes into eb:ErrorDetail (e.g. PEPPOL:NOT_SERVICED). */
  readonly errorDetail: string | undefined;

  constructor(
    ebmsCode: EbmsErrorCode,
    message: string,
    options: { errorDetail?: string; cause?: unknown; code?: GatewayErrorCode } = {},
  ) {
    super(options.code ?? 'UNPROCESSABLE', message, {
      details: {
        ebmsCode,
        shortDescription: EBMS_ERRORS[ebmsCode].shortDescription,
        ...(options.errorDetail ? { errorDetail: options.errorDetail } : {}),
      },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
      retryable: false,
    });
    this.name = 'EbmsError';
    this.ebmsCode = ebmsCode;
    this.errorDetail = options.errorDetail;
  }

  get shortDescription(): string {
    return EBMS_ERRORS[this.ebmsCode].shortDescription;
  }
}
