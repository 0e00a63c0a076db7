import { heartbeat } from '@temporalio/activity';
import { GatewayError, isGatewayError } from '../src/core/gateway-error';
import { DocumentState } from '../src/core/document-states';
import { detectFormat } from '../src/formats/detect';
import type { BlobStore } from '../src/storage/blob-store';
import type { DocumentRepository } from '../src/storage/document.repository';
import type { DetectionOutcome, SendInvoiceInput } from '../workflows/messages';

export interface DocumentActivityDeps {
  documents: DocumentRepository;
  blobs: BlobStore;
  maxDocumentBytes: number;
}

/** Document problems are results, not failures: the workflow records them and ends; infrastructure errors retry. */
const DOCUMENT_PROBLEMS = new Set(['UNKNOWN_FORMAT', 'INVALID_XML', 'UNSAFE_XML', 'UNPROCESSABLE', 'PAYLOAD_TOO_LARGE']);

export function createDocumentActivities(deps: DocumentActivityDeps) {
  return {
    async detectDocumentFormat(input: SendInvoiceInput): Promise<DetectionOutcome> {
      const record = await deps.documents.find(input.tenantId, input.documentId);
      if (!record) throw new GatewayError('DOCUMENT_NOT_FOUND', `document ${input.documentId} not found`);
      // heartbeat() is throttled by the SDK, so calling it per chunk costs nothing.
      const bytes = await deps.blobs.read(record.blobId, deps.maxDocumentBytes, () => heartbeat());
      let outcome: DetectionOutcome;
      try {
        const f = detectFormat(bytes);
        outcome = {
          ok: true,
          format: {
            id: f.id,
            name: f.name,
            syntax: f.syntax,
            documentType: f.documentType,
            ...(f.customizationId ? { customizationId: f.customizationId } : {}),
            ...(f.profileId ? { profileId: f.profileId } : {}),
          },
        };
      } catch (e) {
        if (!isGatewayError(e) || !DOCUMENT_PROBLEMS.has(e.code)) throw e;
        outcome = { ok: false, code: e.code, message: e.message };
      }
      if (outcome.ok) {
        await deps.documents.appendHistory(
          input.tenantId,
          input.documentId,
          { state: DocumentState.Detected, detail: outcome.format.id, key: 'detect' },
          { format: outcome.format },
        );
      } else {
        await deps.documents.appendHistory(input.tenantId, input.documentId, {
          state: DocumentState.Rejected,
          detail: `${outcome.code}: ${outcome.message}`,
          key: 'detect',
        });
      }
      return outcome;
    },
  };
}
