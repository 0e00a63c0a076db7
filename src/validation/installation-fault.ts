import { GatewayError, isGatewayError } from '../core/gateway-error';

/**
 * A validator failure that is the installation's fault, never a verdict on the document: a rule pack missing, stale
 * or not matching its checksums, xmllint absent (DEPENDENCY_UNAVAILABLE). The API answers it 503; a document step
 * throws it again as retryable, so the document waits (the step retrying, the failure visible to operators on the
 * run and in the worker's log) and proceeds once the operator has fixed the installation. Undefined for any other
 * error.
 */
export function installationFault(e: unknown): GatewayError | undefined {
  if (!isGatewayError(e) || e.code !== 'DEPENDENCY_UNAVAILABLE') return undefined;
  return new GatewayError(
    'DEPENDENCY_UNAVAILABLE',
    `${e.message} (the installation's fault: the document waits and is validated once it is fixed)`,
    { retryable: true, cause: e, ...(e.details ? { details: e.details } : {}) },
  );
}
