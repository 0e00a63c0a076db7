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
    { retryable: true, cause: e, details: { ...e.details, installationFault: true } },
  );
}

/**
 * The dependency an installation fault names (the refusal's reason: a pack problem, XMLLINT_MISSING, a pool's
 * VALIDATION_QUEUE_FULL...), when `e` is one installationFault made; undefined otherwise.
 */
export function installationFaultDependency(e: unknown): string | undefined {
  if (!isGatewayError(e) || e.code !== 'DEPENDENCY_UNAVAILABLE' || e.details?.['installationFault'] !== true)
    return undefined;
  const reason = e.details['reason'];
  return typeof reason === 'string' ? reason : 'unknown';
}

/**
 * What a validator call that threw means for the document, the same for every step that validates: `no-rules` (the
 * format has no pinned official rules: not validated, with the reason) or `unreadable` (bytes the validator cannot
 * read as that format: a schema-level refusal). An installation fault is thrown retryable (installationFault), and
 * anything else (our own failures) is thrown as it is.
 */
export type ValidatorFailure =
  { kind: 'no-rules'; reason: string } | { kind: 'unreadable'; code: string; summary: string };

export function validatorFailure(e: unknown): ValidatorFailure {
  const fault = installationFault(e);
  if (fault) throw fault;
  if (isGatewayError(e) && e.code === 'NOT_IMPLEMENTED' && e.details?.['reason'] === 'RULES_NOT_AVAILABLE')
    return { kind: 'no-rules', reason: e.message };
  if (isGatewayError(e) && !e.retryable)
    return { kind: 'unreadable', code: e.code, summary: `${e.code}: ${e.message}` };
  throw e;
}
