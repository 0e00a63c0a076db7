import { isGatewayError } from '../src/core/gateway-error';
import { truncateMessage } from '../src/core/truncate';
import { detectFormat } from '../src/formats/detect';
import { peppolDocumentTypeId } from '../src/formats/document-type-id';
import type { DetectionOutcome } from '../workflows/messages';

/** Document problems are results, not failures: the workflow records them; anything else is rethrown and retried. */
const DOCUMENT_PROBLEMS = new Set([
  'UNKNOWN_FORMAT',
  'INVALID_XML',
  'UNSAFE_XML',
  'UNPROCESSABLE',
  'PAYLOAD_TOO_LARGE',
  'BAD_REQUEST',
]);

/** Format detection of stored bytes as a workflow result (one shape for sent and received documents). */
export function detectionOutcome(bytes: Buffer): DetectionOutcome {
  try {
    const f = detectFormat(bytes);
    const documentTypeId = peppolDocumentTypeId(f);
    return {
      ok: true,
      format: {
        id: f.id,
        name: f.name,
        syntax: f.syntax,
        documentType: f.documentType,
        ...(f.customizationId ? { customizationId: f.customizationId } : {}),
        ...(f.profileId ? { profileId: f.profileId } : {}),
        ...(documentTypeId ? { documentTypeId } : {}),
      },
    };
  } catch (e) {
    if (!isGatewayError(e) || !DOCUMENT_PROBLEMS.has(e.code)) throw e;
    // The message may quote the document (an element name, an identifier): bounded before it reaches the record.
    return { ok: false, code: e.code, message: truncateMessage(e.message) };
  }
}
