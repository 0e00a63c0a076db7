import { GatewayError } from '../core/gateway-error';
import type { BlobStore } from '../storage/blob-store';
import type { DocumentRepository } from '../storage/document.repository';
import type { RetentionRepository } from '../storage/retention/retention.repository';
import type { LegalHoldDoc } from '../storage/retention/retention.schema';

const MAX_REASON = 500;

export interface LegalHoldDeps {
  documents: DocumentRepository;
  retention: RetentionRepository;
  blobs: BlobStore;
}

/** A hold as the admin CLI prints it. */
export interface LegalHoldView {
  tenantId: string;
  documentId: string;
  reason: string;
  by: string;
  at: string;
  as4MessageId: string;
}

function view(h: LegalHoldDoc): LegalHoldView {
  return {
    tenantId: h.tenantId,
    documentId: h.documentId,
    reason: h.reason,
    by: h.by,
    at: h.at.toISOString(),
    as4MessageId: h.as4MessageId ?? '',
  };
}

/**
 * Places a legal hold on one document: retention keeps it (record, history, bytes, events, and for a received
 * document the AS4 message it came in) until the hold is released. One keyed insert; a second hold on a held document
 * is refused with the first one's facts, never overwriting it. The document must exist: checked before the insert,
 * and again after it, since a purge deciding just before the insert may have deleted it (then the hold is taken back
 * and the command fails, so an operator is never told a deleted document is held).
 */
export async function placeHold(
  deps: LegalHoldDeps,
  input: { tenantId: string; documentId: string; reason: string; by: string },
  now = new Date(),
): Promise<LegalHoldView> {
  const reason = input.reason.trim();
  if (!reason) throw new GatewayError('BAD_REQUEST', '--reason is required: say why the document is held');
  if (reason.length > MAX_REASON) throw new GatewayError('BAD_REQUEST', `--reason is longer than ${MAX_REASON}`);
  const stored = await deps.documents.findStored(input.tenantId, input.documentId);
  if (!stored) throw notFound(input);
  const as4MessageId =
    stored.direction === 'inbound' ? await deps.blobs.metadata(stored.blobId).then((m) => m?.['as4MessageId']) : null;
  const hold: LegalHoldDoc = {
    _id: `${input.tenantId}:${input.documentId}`,
    tenantId: input.tenantId,
    documentId: input.documentId,
    reason,
    by: input.by,
    at: now,
    as4MessageId: typeof as4MessageId === 'string' ? as4MessageId : null,
  };
  const placed = await deps.retention.hold(hold);
  if (!placed) {
    const existing = await deps.retention.findHold(input.tenantId, input.documentId);
    throw new GatewayError(
      'CONFLICT',
      `Document ${input.documentId} is already held` +
        (existing ? ` (since ${existing.at.toISOString()} by ${existing.by}: ${existing.reason})` : ''),
    );
  }
  if (!(await deps.documents.findStored(input.tenantId, input.documentId))) {
    await deps.retention.release(input.tenantId, input.documentId);
    throw new GatewayError('DOCUMENT_NOT_FOUND', `Document ${input.documentId} was deleted by retention meanwhile`);
  }
  return view(placed);
}

/** Releases a document's legal hold (deletes the hold record); retention then applies its periods again. */
export async function releaseHold(
  deps: Pick<LegalHoldDeps, 'retention'>,
  input: { tenantId: string; documentId: string },
): Promise<{ tenantId: string; documentId: string; released: true }> {
  if (!(await deps.retention.release(input.tenantId, input.documentId)))
    throw new GatewayError('NOT_FOUND', `No legal hold on document ${input.documentId} in tenant ${input.tenantId}`);
  return { tenantId: input.tenantId, documentId: input.documentId, released: true };
}

/** The holds in place (of one tenant, or all), oldest first. */
export async function listHolds(deps: Pick<LegalHoldDeps, 'retention'>, tenantId?: string): Promise<LegalHoldView[]> {
  return (await deps.retention.listHolds(tenantId)).map(view);
}

function notFound(input: { tenantId: string; documentId: string }): GatewayError {
  return new GatewayError('DOCUMENT_NOT_FOUND', `Document ${input.documentId} not found in tenant ${input.tenantId}`);
}
