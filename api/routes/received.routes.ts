import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { GatewayError, isGatewayError } from '../../src/core/gateway-error';
import { isUuid } from '../../src/core/identifiers';
import type { BlobStore } from '../../src/storage/blob-store';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRecord, DocumentRepository, StoredDocument } from '../../src/storage/document.repository';
import { documentStatusView, sameUpload } from './documents.routes';
import type { Logger } from '../../src/observability/logger';
import { INJECTED_CREATED_BY, injectedMessageId } from '../../workflows/contracts/receive-document';
import type { WorkflowStarter } from '../workflow-client';
import { documentIdParam, partyOf, requireParty } from '../access';
import { receiveUpload, type ReceivedUpload } from '../upload-body';
import { requestIdOf } from '../problem-details';
import { verdictOfRecord } from './documents-list.routes';

export interface ReceivedRouteDeps {
  directory: DirectoryRepository;
  documents: DocumentRepository;
  blobs: BlobStore;
  workflows: WorkflowStarter;
  logger: Logger;
  maxUploadBytes: number;
}

function conflict(documentId: string): GatewayError {
  return new GatewayError('DOCUMENT_ID_CONFLICT', `Document ${documentId} names another document`, {
    details: { documentId },
  });
}

/** A received document's status: the sales invoice status shape, with the verdict in the API's words. */
function statusOf(doc: DocumentRecord) {
  const verdict = verdictOfRecord(doc);
  return { ...documentStatusView(doc), ...(verdict ? { verdict } : {}) };
}

/**
 * A received document's status, and POST /api/v1/{partyId}/generic/receive: a document injected as if it had
 * arrived over the network for the party. The injection takes the sales-invoice upload's intake (size limit, media
 * types and first-bytes check, no Content-Encoding, one file part) and its invariant (bytes and record durable and the
 * run started before the 200); the receive run reads it with the secure parser like every received document.
 */
export function registerReceivedRoutes(router: Router, deps: ReceivedRouteDeps): void {
  const party = requireParty(deps.directory);

  router.get('/api/v1/:partyId/purchaseInvoice/:documentId/status', party, async (req: Request, res: Response) => {
    const { tenantId, partyId } = partyOf(res);
    const documentId = documentIdParam(req);
    const doc = await deps.documents.findForParty(tenantId, partyId, documentId);
    if (!doc || doc.direction !== 'inbound')
      throw new GatewayError('DOCUMENT_NOT_FOUND', `Purchase document ${documentId} not found`);
    res.json(statusOf(doc));
  });

  router.post('/api/v1/:partyId/generic/receive', party, async (req: Request, res: Response) => {
    const { tenantId, partyId, legalEntityId } = partyOf(res);
    const header = req.get('X-Service-DocumentId');
    if (header !== undefined && !isUuid(header.trim()))
      throw new GatewayError('INVALID_DOCUMENT_ID', 'X-Service-DocumentId must be a UUID');
    const documentId = (header?.trim() ?? randomUUID()).toLowerCase();
    const taken = await deps.documents.findStored(tenantId, documentId);
    if (taken && (taken.direction !== 'inbound' || taken.partyId !== partyId)) throw conflict(documentId);

    let upload: ReceivedUpload;
    try {
      upload = await receiveUpload(req, deps.blobs, deps.maxUploadBytes, { tenantId, documentId });
    } catch (e) {
      if (isGatewayError(e) && e.code === 'PAYLOAD_TOO_LARGE') res.set('Connection', 'close');
      throw e;
    }
    await storeInjected(deps, { tenantId, partyId, legalEntityId, documentId, upload });
    if (!deps.workflows.startReceiveDocument)
      throw new GatewayError('WORKFLOW_START_FAILED', 'Receiving is not available on this server', {
        details: { documentId },
      });
    // Started for the record's own bytes: a repeat with the same id finds the run already there.
    await deps.workflows.startReceiveDocument({
      tenantId,
      messageId: injectedMessageId(documentId),
      injected: { documentId },
    });
    deps.logger.info({ requestId: requestIdOf(req), tenantId, documentId, size: upload.size }, 'document injected');
    res.status(200).json({ id: documentId });
  });
}

/**
 * The injected document's record, written once (it is the received document itself, as a received message's is). A
 * repeat of the id with the same bytes for the same party uses the stored record; other bytes are a conflict.
 */
async function storeInjected(
  deps: ReceivedRouteDeps,
  input: { tenantId: string; partyId: string; legalEntityId: string; documentId: string; upload: ReceivedUpload },
): Promise<StoredDocument> {
  const { tenantId, partyId, legalEntityId, documentId, upload } = input;
  const inserted = await deps.documents.insertInbound({
    tenantId,
    documentId,
    partyId,
    legalEntityId,
    channel: 'api',
    createdBy: INJECTED_CREATED_BY,
    contentType: upload.contentType,
    filename: upload.filename,
    size: upload.size,
    sha256: upload.sha256,
    blobId: upload.blobId,
  });
  return inserted ?? sameUpload(deps, { tenantId, partyId, documentId, upload, direction: 'inbound' });
}
