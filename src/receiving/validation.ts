/**
 * The official-rule verdict on a received document: the same validator and rule packs as sending (the document pool
 * in the worker), recorded on the received document's validation entry. A verdict never drops a document: an
 * invalid invoice is stored and announced like a valid one, and its receiver decides.
 */
import { Transition } from '../core/document-states';
import { assertionInfo, type DocumentValidationInfo } from '../storage/models';
import { MAX_KEPT_ASSERTIONS, summarizeErrors } from '../sending/check-document';
import type { DocumentValidator } from '../sending/ports';
import type { DocumentRepository } from '../storage/document.repository';
import { validatorFailure, type Assertion, type ValidationResult } from '../validation';
import type { ReceivedValidation } from '../../workflows/contracts/receive-document';

/** Failing rule ids the verdict names (the record keeps up to MAX_KEPT_ASSERTIONS assertions). */
export const MAX_NAMED_RULES = 20;

function errorsFirst(assertions: readonly Assertion[]): Assertion[] {
  return [...assertions.filter((a) => a.flag === 'error'), ...assertions.filter((a) => a.flag !== 'error')];
}

function toRecord(result: ValidationResult, at: Date): DocumentValidationInfo {
  const ordered = errorsFirst(result.assertions);
  const errorCount = result.assertions.filter((a) => a.flag === 'error').length;
  return {
    isValid: result.isValid,
    ruleSets: result.ruleSets.map((r) => ({ id: r.id, version: r.version, outcome: r.outcome })),
    assertions: ordered.slice(0, MAX_KEPT_ASSERTIONS).map(assertionInfo),
    errorCount,
    warningCount: result.assertions.length - errorCount,
    truncated: result.truncated === true || ordered.length > MAX_KEPT_ASSERTIONS,
    validatedAt: at,
  };
}

/** The verdict of one validation result: valid (warnings counted), or invalid with its reason codes and rules. */
export function verdictOf(result: ValidationResult): ReceivedValidation {
  const errors = result.assertions.filter((a) => a.flag === 'error');
  if (result.isValid) {
    return {
      kind: 'valid',
      warnings: result.assertions.length - errors.length,
      ruleSets: result.ruleSets.map((r) => `${r.id}@${r.version}`),
    };
  }
  // BW only travels with fatal errors (spec 2.6): an invalid document's warnings are part of its verdict.
  const reasonCodes = [...new Set(result.assertions.map((a) => a.reasonCode))].sort();
  return {
    kind: 'invalid',
    errors: errors.length,
    reasonCodes,
    ruleIds: [...new Set(errorsFirst(result.assertions).map((a) => a.ruleId))].slice(0, MAX_NAMED_RULES),
    summary: summarizeErrors(result.assertions),
  };
}

/**
 * Validates a received document's bytes against the official rules of the format detection found and writes the
 * verdict as the document's validation entry (a keyed insert: a retried step keeps the first). A format without
 * official rules is `not-validated` with the reason; bytes the validator cannot read as that format are invalid
 * (SV); a missing rule pack is an infrastructure failure and is thrown (retried).
 */
export async function validateReceived(
  deps: { documents: DocumentRepository; validator: DocumentValidator; heartbeat: () => void },
  target: { tenantId: string; documentId: string; formatId: string },
  bytes: Buffer,
): Promise<ReceivedValidation> {
  const { tenantId, documentId } = target;
  let result: ValidationResult;
  try {
    deps.heartbeat();
    result = await deps.validator.validate(bytes, { sourceFormat: target.formatId });
  } catch (e) {
    const failure = validatorFailure(e);
    if (failure.kind === 'no-rules') {
      await deps.documents.recordTransition(tenantId, documentId, Transition.notValidated, { detail: failure.reason });
      return { kind: 'not-validated', reason: failure.reason };
    }
    const { summary } = failure;
    await deps.documents.recordTransition(tenantId, documentId, Transition.invalid, {
      detail: `Invalid payload: ${summary}`,
    });
    return { kind: 'invalid', errors: 1, reasonCodes: ['SV'], ruleIds: [failure.code], summary };
  }
  const verdict = verdictOf(result);
  const validation = { validation: toRecord(result, new Date()) };
  if (verdict.kind === 'valid') {
    const detail = verdict.ruleSets.join(', ');
    await deps.documents.recordTransition(tenantId, documentId, Transition.validated, { detail }, validation);
  } else if (verdict.kind === 'invalid') {
    const detail = `Invalid payload: ${verdict.summary}`;
    await deps.documents.recordTransition(tenantId, documentId, Transition.invalid, { detail }, validation);
  }
  return verdict;
}

/** The verdict as event details (every value a string): `validation`, and what it found. */
export function validationDetails(verdict: ReceivedValidation | undefined): Record<string, string> {
  if (!verdict) return {};
  if (verdict.kind === 'valid') return { validation: 'valid', validationRuleSets: verdict.ruleSets.join(',') };
  if (verdict.kind === 'not-validated') return { validation: 'not-validated', validationReason: verdict.reason };
  return {
    validation: 'invalid',
    validationReasonCodes: verdict.reasonCodes.join(','),
    validationRules: verdict.ruleIds.join(','),
  };
}
