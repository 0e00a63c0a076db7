import { Transition } from '../core/document-states';
import { inspectUpload } from '../documents/detection';
import { loadDocument, whileBeating } from '../documents/loader';
import { assertionInfo, type DocumentValidationInfo } from '../storage/models';
import { validatorFailure, type Assertion, type ValidationResult } from '../validation';
import type {
  CheckDocumentResult,
  DetectionOutcome,
  DocumentFacts,
  SendInvoiceInput,
  ValidationOutcome,
} from '../../workflows/contracts/send-invoice';
import type { SendInvoiceDeps } from './ports';

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
    assertions: kept.map(assertionInfo),
    errorCount: result.assertions.filter((a) => a.flag === 'error').length,
    warningCount: result.assertions.filter((a) => a.flag !== 'error').length,
    truncated,
    validatedAt: at,
  };
}

/**
 * The detection step: the format (or why it is refused) goes on the record as its `detect` entry.
 */
export async function recordDetection(
  deps: Pick<SendInvoiceDeps, 'documents'>,
  input: { tenantId: string; documentId: string },
  detection: DetectionOutcome,
) {
  if (detection.ok) {
    await deps.documents.recordTransition(
      input.tenantId,
      input.documentId,
      Transition.detected,
      { detail: detection.format.id },
      { format: detection.format },
    );
  } else {
    await deps.documents.recordTransition(input.tenantId, input.documentId, Transition.rejected, {
      detail: `${detection.code}: ${detection.message}`,
    });
  }
}

/**
 * The validation step: the bytes against the official rules of the format detection found (forced, so both steps
 * judge the same format). Invalid documents and formats without rules are results; a missing rule pack is an
 * infrastructure failure (DEPENDENCY_UNAVAILABLE) retried until an operator fetches the packs.
 */
export async function validate(
  deps: Pick<SendInvoiceDeps, 'heartbeat' | 'validator' | 'documents'>,
  input: { tenantId: string; documentId: string },
  bytes: Buffer,
  formatId: string,
): Promise<ValidationOutcome> {
  let outcome: ValidationOutcome;
  let result: ValidationResult | undefined;
  try {
    // A 1,000-line invoice takes seconds on an idle pool thread and minutes on a loaded machine: the step beats while
    // the thread works, so a live validation is never taken for a dead worker's and started again beside itself.
    result = await whileBeating(deps.heartbeat, () => deps.validator.validate(bytes, { sourceFormat: formatId }));
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
    const failure = validatorFailure(e);
    // Unreadable: bytes that detection accepted but the validator cannot read (e.g. a forced format that does not fit).
    outcome =
      failure.kind === 'no-rules'
        ? { kind: 'not-validated', reason: failure.reason }
        : { kind: 'invalid', errors: 1, reasonCodes: ['SV'], summary: failure.summary };
  }

  const validation = result ? { validation: toRecord(result, new Date()) } : {};
  const { tenantId, documentId } = input;
  if (outcome.kind === 'valid') {
    const detail = outcome.ruleSets.join(', ');
    await deps.documents.recordTransition(tenantId, documentId, Transition.validated, { detail }, validation);
  } else if (outcome.kind === 'not-validated') {
    await deps.documents.recordTransition(tenantId, documentId, Transition.notValidated, { detail: outcome.reason });
  } else {
    // The final state (InvoiceSentError) is written by the workflow's error step; this keeps the assertions.
    const detail = `Invalid payload: ${outcome.summary}`;
    await deps.documents.recordTransition(tenantId, documentId, Transition.invalid, { detail }, validation);
  }
  return outcome;
}

/** The party's legal-entity id, for a record written before uploads stamped it. */
export async function legalEntityOf(
  deps: Pick<SendInvoiceDeps, 'directory'>,
  tenantId: string,
  partyId: string,
): Promise<string | null> {
  const party = await deps.directory.findParty(partyId);
  return party && party.tenantId === tenantId ? party.legalEntityId : null;
}

/**
 * The document check of a sales invoice: one read of the record and its bytes, detection (with the routing facts,
 * on the same parse), then validation of a recognised format. What it read travels on as facts.
 */
export async function checkDocument(deps: SendInvoiceDeps, input: SendInvoiceInput): Promise<CheckDocumentResult> {
  const { stored, bytes } = await loadDocument(deps, input.tenantId, input.documentId);
  // A format with no place for the seller's electronic address is sent as the party it was uploaded for.
  const inspected = inspectUpload(bytes, { uploader: stored.partyId });
  const facts: DocumentFacts = {
    blobId: stored.blobId,
    partyId: stored.partyId,
    legalEntityId: stored.legalEntityId ?? (await legalEntityOf(deps, input.tenantId, stored.partyId)),
    createdBy: stored.createdBy,
    pdf: inspected.pdf,
    ...(inspected.root ? { root: inspected.root } : {}),
    ...(inspected.routing ? { routing: inspected.routing } : {}),
  };
  const { detection } = inspected;
  await recordDetection(deps, input, detection);
  if (!detection.ok) return { detection, facts };
  const validation = await validate(deps, input, bytes, detection.format.id);
  return { detection, validation, facts };
}
