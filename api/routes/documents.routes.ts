import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { chooseChannel } from '../../src/core/channels';
import { DocumentState } from '../../src/core/document-states';
import { resendDocument, retryDocumentNow, type SendRunControl } from '../../src/sending/operator';
import { GatewayError, isGatewayError } from '../../src/core/gateway-error';
import type { HookRecord } from '../../src/storage/hooks/hook.repository';
import { isUuid } from '../../src/core/identifiers';
import type { BlobStore } from '../../src/storage/blob-store';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRecord, DocumentRepository, StoredDocument } from '../../src/storage/document.repository';
import { assertionInfo } from '../../src/storage/models';
import { isTransientStorageError, withStorageRetries } from '../../src/storage/retry';
import type { Logger } from '../../src/observability/logger';
import type { WorkflowStarter } from '../workflow-client';
import { documentIdParam, partyOf, requireParty } from '../access';
import { receiveUpload, type ReceivedUpload } from '../upload-body';
import { requestIdOf } from '../problem-details';
import { queryString, setTransformHeaders } from '../request';
import { inProcessTransform, type TransformRunner } from '../../src/transform';

export interface DocumentRouteDeps {
  directory: DirectoryRepository;
  documents: DocumentRepository;
  blobs: BlobStore;
  workflows: WorkflowStarter;
  logger: Logger;
  maxUploadBytes: number;
  /** Conversions for `download?targetFormat=`; in process when not given. */
  transform?: TransformRunner;
  /** The channel hooks `?channel=` may name; absent (a process without webhooks): only the default channel. */
  hooks?: { listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]> } | undefined;
}

const CHANNEL = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * `?channel=` (spec 4.3) names a channel hook of the caller's party or environment, or `peppol-fallback` when a mail
 * hook listens on the fallback topic: anything else is a 400 now, not a silent default later. The same selection code
 * as the sendInvoice run (src/core/channels.ts).
 */
async function checkChannel(deps: DocumentRouteDeps, tenantId: string, partyId: string, channel: string) {
  if (!CHANNEL.test(channel)) throw new GatewayError('BAD_REQUEST', 'channel must be a hook id or channel name');
  const hooks = deps.hooks ? await deps.hooks.listForRouting(tenantId, partyId) : [];
  // Whether the channel exists is checked here; a hook's filter decides per document, in the run.
  const choice = chooseChannel('SendInvoice', 'Invoice', hooks, { forced: channel, passesFilter: () => true });
  if (!choice.ok) {
    throw new GatewayError('BAD_REQUEST', `channel ${channel} cannot be used: ${choice.reason}`, {
      details: { reason: 'UNKNOWN_CHANNEL' },
    });
  }
}

export function conflict(documentId: string): GatewayError {
  return new GatewayError('DOCUMENT_ID_CONFLICT', `Document ${documentId} was already processed`, {
    details: { documentId },
  });
}

/** A document's status resource: state, history, format and the validation outcome (sent and received alike). */
export function documentStatusView(doc: DocumentRecord) {
  const waiting = doc.state === DocumentState.Retrying ? doc.history.at(-1)?.nextAttemptOn : undefined;
  return {
    id: doc.documentId,
    state: doc.state,
    // While a sales invoice waits between attempts: when the next one is due (POST …/retryNow brings it forward).
    ...(waiting ? { nextAttemptOn: waiting.toISOString() } : {}),
    history: doc.history.map((h) => ({
      state: h.state,
      at: h.at.toISOString(),
      ...(h.detail ? { detail: h.detail } : {}),
      ...(h.channel ? { channel: h.channel } : {}),
      ...(h.nextAttemptOn ? { nextAttemptOn: h.nextAttemptOn.toISOString() } : {}),
      ...(h.responseCode ? { responseCode: h.responseCode } : {}),
    })),
    // A sales invoice the buyer answered with an Invoice Response: its latest verdict (the state stays the delivery's).
    ...(doc.buyerResponse
      ? {
          buyerResponse: {
            statusCode: doc.buyerResponse.statusCode,
            at: doc.buyerResponse.at.toISOString(),
            responseDocumentId: doc.buyerResponse.responseDocumentId,
            ...(doc.buyerResponse.detail ? { detail: doc.buyerResponse.detail } : {}),
          },
        }
      : {}),
    // The invoice's tax report: its latest step (reporting is beside delivery; the state stays the delivery's).
    ...(doc.taxReport
      ? {
          taxReport: {
            step: doc.taxReport.step,
            at: doc.taxReport.at.toISOString(),
            report: doc.taxReport.report,
            reportType: doc.taxReport.reportType,
            ...(doc.taxReport.detail ? { detail: doc.taxReport.detail } : {}),
          },
        }
      : {}),
    ...(doc.format
      ? { format: { id: doc.format.id, name: doc.format.name, documentType: doc.format.documentType } }
      : {}),
    ...(doc.validation
      ? {
          validation: {
            isValid: doc.validation.isValid,
            ruleSets: doc.validation.ruleSets.map((r) => ({ id: r.id, version: r.version, outcome: r.outcome })),
            errorCount: doc.validation.errorCount,
            warningCount: doc.validation.warningCount,
            truncated: doc.validation.truncated,
            assertions: doc.validation.assertions.map(assertionInfo),
          },
        }
      : {}),
  };
}

/**
 * POST /api/v1/{partyId}/salesInvoice/send, status and download. Invariant: the bytes and the record are durable and
 * the workflow is started before the 200; a failure before that leaves a record a retry can complete.
 */
export function registerDocumentRoutes(router: Router, deps: DocumentRouteDeps): void {
  const party = requireParty(deps.directory);

  router.post('/api/v1/:partyId/salesInvoice/send', party, async (req: Request, res: Response) => {
    const { tenantId, partyId, legalEntityId } = partyOf(res);
    const header = req.get('X-Service-DocumentId');
    if (header !== undefined && !isUuid(header.trim())) {
      throw new GatewayError('INVALID_DOCUMENT_ID', 'X-Service-DocumentId must be a UUID (never the invoice number)');
    }
    const documentId = (header?.trim() ?? randomUUID()).toLowerCase();
    const channel = typeof req.query['channel'] === 'string' ? req.query['channel'] : undefined;
    if (channel !== undefined) await checkChannel(deps, tenantId, partyId, channel);

    if (await deps.documents.isAccepted(tenantId, documentId)) throw conflict(documentId);

    let upload: ReceivedUpload;
    try {
      upload = await receiveUpload(req, deps.blobs, deps.maxUploadBytes, { tenantId, documentId });
    } catch (e) {
      // The client may still be sending: close the connection rather than read up to 24 MB we will not keep.
      if (isGatewayError(e) && e.code === 'PAYLOAD_TOO_LARGE') res.set('Connection', 'close');
      throw e;
    }

    const record = await storeRecord(deps, { tenantId, partyId, legalEntityId, documentId, channel, upload });
    // Started for the record's own bytes: a retry of a request that started it finds the run already there.
    await deps.workflows.startSendInvoice({ tenantId, documentId, ...(channel !== undefined ? { channel } : {}) });
    let accepted: boolean;
    try {
      // The one answer 200 of all the requests with this id is the one whose acceptance entry is stored; an insert
      // under a unique key, so a lock timeout (FerretDB under write load) is simply repeated.
      accepted = await withStorageRetries(() => deps.documents.accept(tenantId, documentId));
    } catch (e) {
      if (!isTransientStorageError(e)) throw e;
      throw new GatewayError(
        'STORAGE_FAILED',
        'The invoice is stored and its processing has started, but its acceptance could not be recorded; ' +
          'repeat the request with the same X-Service-DocumentId',
        { cause: e, details: { documentId } },
      );
    }
    if (!accepted) throw conflict(documentId);
    deps.logger.info(
      { requestId: requestIdOf(req), tenantId, documentId, size: record.size },
      'sales invoice accepted',
    );
    res.status(200).json({ id: documentId });
  });

  /** A sales invoice of the caller's party, or 404. */
  const salesDocument = async (req: Request, res: Response) => {
    const { tenantId, partyId } = partyOf(res);
    const documentId = documentIdParam(req);
    const doc = await deps.documents.findForParty(tenantId, partyId, documentId);
    if (!doc || doc.direction !== 'outbound')
      throw new GatewayError('DOCUMENT_NOT_FOUND', `Document ${documentId} not found`);
    return doc;
  };
  const runControl = (): SendRunControl => {
    const w = deps.workflows;
    if (!w.resendInvoice || !w.retryNow)
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'Resending is not available in this process');
    return { resendInvoice: w.resendInvoice.bind(w), retryNow: w.retryNow.bind(w) };
  };

  /** Resend (beyond the contract): a document in InvoiceSentError gets a new run (src/sending/operator.ts). */
  router.post('/api/v1/:partyId/salesInvoice/:documentId/resend', party, async (req: Request, res: Response) => {
    const doc = await salesDocument(req, res);
    const { generation } = await resendDocument(deps.documents, runControl(), doc);
    res.status(202).json({ id: doc.documentId, state: DocumentState.Resending, generation });
  });

  /** Retry now (beyond the contract): a document waiting between attempts makes its next attempt at once. */
  router.post('/api/v1/:partyId/salesInvoice/:documentId/retryNow', party, async (req: Request, res: Response) => {
    const doc = await salesDocument(req, res);
    await retryDocumentNow(runControl(), doc);
    res.status(202).json({ id: doc.documentId, state: doc.state });
  });

  router.get('/api/v1/:partyId/salesInvoice/:documentId/status', party, async (req: Request, res: Response) => {
    res.json(documentStatusView(await salesDocument(req, res)));
  });

  router.get('/api/v1/:partyId/generic/:documentId/download', party, async (req: Request, res: Response) => {
    const { tenantId, partyId } = partyOf(res);
    const documentId = documentIdParam(req);
    const doc = await deps.documents.findForParty(tenantId, partyId, documentId);
    if (!doc) throw new GatewayError('DOCUMENT_NOT_FOUND', `Document ${documentId} not found`);
    await sendStoredDocument(deps, res, doc);
  });

  /** A received document: byte for byte, or converted with ?targetFormat= (the transform endpoint's rules). */
  router.get('/api/v1/:partyId/purchaseInvoice/:documentId/download', party, async (req: Request, res: Response) => {
    const doc = await purchaseDocument(deps, req, res);
    const targetFormat = queryString(req, 'targetFormat');
    if (targetFormat === undefined) {
      await sendStoredDocument(deps, res, doc);
      return;
    }
    const targetSyntax = queryString(req, 'targetSyntax');
    if (targetSyntax !== undefined && targetSyntax !== 'UBL' && targetSyntax !== 'CII')
      throw new GatewayError('BAD_REQUEST', 'targetSyntax must be UBL or CII');
    const bytes = await deps.blobs.read(doc.blobId, deps.maxUploadBytes);
    const result = await (deps.transform ?? inProcessTransform)(bytes, {
      targetFormat,
      ...(targetSyntax ? { targetSyntax } : {}),
    });
    setTransformHeaders(res, result.report);
    if (result.pdf) {
      // A Factur-X target: the PDF/A-3 with the converted XML embedded.
      res.set('Content-Disposition', `attachment; filename="${doc.documentId}.pdf"`);
      res.status(200).type('application/pdf').send(result.pdf);
      return;
    }
    res.set('Content-Disposition', `attachment; filename="${doc.documentId}.xml"`);
    res.status(200).type('application/xml').send(result.xml);
  });

  /** Removes a received document and its bytes (the customer's copy; the AS4 record of the exchange stays). */
  router.delete('/api/v1/:partyId/purchaseInvoice/:documentId', party, async (req: Request, res: Response) => {
    const { tenantId, partyId } = partyOf(res);
    const doc = await purchaseDocument(deps, req, res);
    await deps.documents.deleteInbound(tenantId, partyId, doc.documentId);
    await deps.blobs.delete(doc.blobId);
    res.status(204).end();
  });
}

/** The party's received document named in the path; 404 for an unknown id and for a sales (sent) document. */
async function purchaseDocument(deps: DocumentRouteDeps, req: Request, res: Response): Promise<DocumentRecord> {
  const { tenantId, partyId } = partyOf(res);
  const documentId = documentIdParam(req);
  const doc = await deps.documents.findForParty(tenantId, partyId, documentId);
  if (!doc || doc.direction !== 'inbound')
    throw new GatewayError('DOCUMENT_NOT_FOUND', `Purchase document ${documentId} not found`);
  return doc;
}

/** Streams the stored bytes as an attachment. */
/** Streams a stored document's bytes as an attachment (the generic download, and the httpsin inbox's document). */
export async function sendStoredDocument(
  deps: Pick<DocumentRouteDeps, 'blobs'>,
  res: Response,
  doc: DocumentRecord,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const stream = deps.blobs.open(doc.blobId);
    // The attachment headers go out with the first byte: a blob that cannot be read at all is answered as a
    // problem, not as an attachment of the promised length with no body.
    stream.once('readable', () => {
      res.status(200);
      res.set('Content-Type', doc.contentType);
      res.set('Content-Length', String(doc.size));
      res.set('Content-Disposition', `attachment; filename="${downloadName(doc)}"`);
      res.set('ETag', `"${doc.sha256}"`);
      res.set('X-Content-Type-Options', 'nosniff');
      stream.pipe(res);
    });
    stream.on('error', reject);
    res.on('finish', resolve);
    res.on('close', resolve);
  });
}

function downloadName(doc: DocumentRecord): string {
  const ext = doc.contentType.includes('pdf') ? 'pdf' : 'xml';
  return `${doc.documentId}.${ext}`;
}

/**
 * Writes the record for a fresh upload. A repeat of an id whose upload was never answered 200 (an earlier request
 * failed with a 5xx, or one runs beside it) uses the stored record when it carries the same bytes; different bytes
 * under a taken id are a conflict. The stored record never changes, so the bytes a workflow validates and sends are
 * the record's, and a record never points at removed bytes: a request only ever removes the blob it wrote itself.
 */
export async function storeRecord(
  deps: DocumentRouteDeps,
  input: {
    tenantId: string;
    partyId: string;
    legalEntityId: string;
    documentId: string;
    channel: string | undefined;
    upload: ReceivedUpload;
  },
): Promise<StoredDocument> {
  const { tenantId, partyId, legalEntityId, documentId, channel, upload } = input;
  const inserted = await deps.documents.insertOutbound({
    tenantId,
    documentId,
    partyId,
    // Stamped once with the record (never updated): the workflow's events name the party without looking it up.
    legalEntityId,
    channel,
    createdBy: 'api',
    contentType: upload.contentType,
    filename: upload.filename,
    size: upload.size,
    sha256: upload.sha256,
    blobId: upload.blobId,
  });
  return inserted ?? sameUpload(deps, { tenantId, partyId, documentId, upload, direction: 'outbound' });
}

/**
 * A repeat of a taken document id: the blob this request wrote goes, and the stored record answers when it is the same
 * party's document of this direction with the same bytes; anything else is a conflict.
 */
export async function sameUpload(
  deps: { blobs: BlobStore; documents: DocumentRepository },
  input: { tenantId: string; partyId: string; documentId: string; upload: ReceivedUpload; direction: string },
): Promise<StoredDocument> {
  const { tenantId, partyId, documentId, upload } = input;
  await deps.blobs.delete(upload.blobId);
  const existing = await deps.documents.findStored(tenantId, documentId);
  if (!existing || existing.direction !== input.direction || existing.partyId !== partyId) throw conflict(documentId);
  if (existing.sha256 !== upload.sha256) {
    throw new GatewayError(
      'DOCUMENT_ID_CONFLICT',
      `Document ${documentId} was already stored with other content; a new document needs a new X-Service-DocumentId`,
      { details: { documentId } },
    );
  }
  return existing;
}
