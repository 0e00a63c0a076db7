import { heartbeat } from '@temporalio/activity';
import { GatewayError, isGatewayError } from '../src/core/gateway-error';
import { DocumentState, HistoryStep } from '../src/core/document-states';
import type { Assertion, ValidateOptions, ValidationResult } from '../src/validation';
import type { BlobStore } from '../src/storage/blob-store';
import type { DocumentRepository } from '../src/storage/document.repository';
import type { DocumentValidationInfo } from '../src/storage/models';
import type { ValidateDocumentInput, ValidationOutcome } from '../workflows/messages';

export interface ValidationActivityDeps {
  documents: DocumentRepository;
  blobs: BlobStore;
  maxDocumentBytes: number;
  /**
   * The Validator, or the worker-thread pool with the same `validate` (the process's choice). Absent in a worker built
   * without rule packs: the step then fails with a clear, non-retryable error.
   */
  validator?: { validate(input: Buffer, options?: ValidateOptions): Promise<ValidationResult> };
}

/** Assertions kept on a record: enough to act on, bounded so a broken document cannot bloat the record. */
export const MAX_KEPT_ASSERTIONS = 200;
/** How many errors the status history line and the event message quote. */
const QUOTED_ERRORS = 3;

/** Errors first (they decide), then warnings while room remains. */
function keep(assertions: readonly Assertion[], truncated: boolean): { kept: Assertion[]; truncated: boolean } {
  const ordered = [...assertions.filter((a) => a.flag === 'error'), ...assertions.filter((a) => a.flag !== 'error')];
  return { kept: ordered.slice(0, MAX_KEPT_ASSERTIONS), truncated: truncated || ordered.length > MAX_KEPT_ASSERTIONS };
}

/** The first errors as one line: `[SV] cvc-datatype-valid.1.2.1 at /Invoice/...: text; [BV] BR-CO-15 ...`. */
export function summarizeErrors(assertions: readonly Assertion[], max = QUOTED_ERRORS): string {
  const errors = assertions.filter((a) => a.flag === 'error');
  const quoted = errors
    .slice(0, max)
    .map((a) => `[${a.reasonCode}] ${a.ruleId} at ${a.location}: ${a.text.replace(/\s+/g, ' ').trim().slice(0, 300)}`);
  const more = errors.length > max ? ` (and ${errors.length - max} more)` : '';
  return quoted.join('; ') + more;
}

function toRecord(result: ValidationResult, at: Date): DocumentValidationInfo {
  const { kept, truncated } = keep(result.assertions, result.truncated === true);
  return {
    isValid: result.isValid,
    ruleSets: result.ruleSets.map((r) => ({ id: r.id, version: r.version, outcome: r.outcome })),
    assertions: kept.map((a) => ({
      artifact: a.artifact,
      flag: a.flag,
      ruleId: a.ruleId,
      location: a.location,
      text: a.text,
      reasonCode: a.reasonCode,
      ruleSet: a.ruleSet,
    })),
    errorCount: result.assertions.filter((a) => a.flag === 'error').length,
    warningCount: result.assertions.filter((a) => a.flag !== 'error').length,
    truncated,
    validatedAt: at,
  };
}

export function createValidationActivities(deps: ValidationActivityDeps) {
  return {
    /**
     * Validates a stored document against the official rules of the format detection found (forced, so both steps
     * judge the same format). Invalid documents and formats without rules are results; a missing rule pack is an
     * infrastructure failure (DEPENDENCY_UNAVAILABLE) that Temporal retries until an operator fetches the packs.
     */
    async validateDocument(input: ValidateDocumentInput): Promise<ValidationOutcome> {
      const validator = deps.validator;
      if (!validator) {
        throw new GatewayError(
          'NOT_IMPLEMENTED',
          'this worker has no validator configured (ActivityDeps.validator missing)',
          { retryable: false },
        );
      }
      const record = await deps.documents.findStored(input.tenantId, input.documentId);
      if (!record) throw new GatewayError('DOCUMENT_NOT_FOUND', `document ${input.documentId} not found`);
      const bytes = await deps.blobs.read(record.blobId, deps.maxDocumentBytes, () => heartbeat());

      let outcome: ValidationOutcome;
      let result: ValidationResult | undefined;
      try {
        heartbeat();
        result = await validator.validate(bytes, { sourceFormat: input.formatId });
        const errors = result.assertions.filter((a) => a.flag === 'error');
        outcome = result.isValid
          ? {
              kind: 'valid',
              warnings: result.assertions.length - errors.length,
              ruleSets: result.ruleSets.map((r) => `${r.id}@${r.version}`),
            }
          : {
              kind: 'invalid',
              errors: errors.length,
              reasonCodes: [...new Set(errors.map((a) => a.reasonCode))].sort(),
              summary: summarizeErrors(result.assertions),
            };
      } catch (e) {
        if (isGatewayError(e) && e.code === 'NOT_IMPLEMENTED' && e.details?.reason === 'RULES_NOT_AVAILABLE') {
          outcome = { kind: 'not-validated', reason: e.message };
        } else if (isGatewayError(e) && !e.retryable) {
          // Bytes that detection accepted but the validator cannot read (e.g. a forced format that does not fit).
          outcome = { kind: 'invalid', errors: 1, reasonCodes: ['SV'], summary: `${e.code}: ${e.message}` };
        } else {
          throw e;
        }
      }

      const now = new Date();
      const validation = result ? toRecord(result, now) : undefined;
      if (outcome.kind === 'valid') {
        await deps.documents.appendHistory(
          input.tenantId,
          input.documentId,
          { state: DocumentState.Validated, detail: outcome.ruleSets.join(', '), key: HistoryStep.validate.key },
          validation ? { validation } : {},
        );
      } else if (outcome.kind === 'not-validated') {
        await deps.documents.appendHistory(input.tenantId, input.documentId, {
          state: DocumentState.NotValidated,
          detail: outcome.reason,
          key: HistoryStep.validate.key,
        });
      } else if (validation) {
        // The final state (InvoiceSentError) is written by the workflow's error step; this keeps the assertions.
        await deps.documents.appendHistory(
          input.tenantId,
          input.documentId,
          {
            state: DocumentState.Invalid,
            detail: `Invalid payload: ${outcome.summary}`,
            key: HistoryStep.validate.key,
          },
          { validation },
        );
      } else {
        await deps.documents.appendHistory(input.tenantId, input.documentId, {
          state: DocumentState.Invalid,
          detail: `Invalid payload: ${outcome.summary}`,
          key: HistoryStep.validate.key,
        });
      }
      return outcome;
    },
  };
}
