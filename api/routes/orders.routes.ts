import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { GatewayError, isGatewayError } from '../../src/core/gateway-error';
import { isUuid } from '../../src/core/identifiers';
import type { Logger } from '../../src/observability/logger';
import { orderResponseInputProblem, type OrderResponseSpec } from '../../src/peppol/order-response';
import { orderResponseFor, sentOrderResponseId } from '../../src/receiving/order-response-send';
import { ORDER_FORMAT_ID, orderUploadProblem } from '../../src/sending/order-send';
import type { BlobStore } from '../../src/storage/blob-store';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRepository } from '../../src/storage/document.repository';
import { isTransientStorageError, withStorageRetries } from '../../src/storage/retry';
import {
  sendOrderResponseWorkflowId,
  type OrderLineStatus,
  type SendOrderResponseInput,
} from '../../workflows/contracts/send-order-response';
import { OrderResponseInput } from '../contracts/orders';
import { documentIdParam, partyOf, requireParty } from '../access';
import { requestIdOf } from '../problem-details';
import { receiveUpload, type ReceivedUpload } from '../upload-body';
import type { WorkflowStarter } from '../workflow-client';
import { conflict, documentStatusView, storeRecord } from './documents.routes';
import { badField, jsonBody } from '../request';

export interface OrderRouteDeps {
  directory: DirectoryRepository;
  documents: DocumentRepository;
  blobs: BlobStore;
  workflows: WorkflowStarter;
  logger: Logger;
  maxUploadBytes: number;
}

/** Largest Order Response body: a status, a note and the answers to a few hundred lines. */
export const MAX_ORDER_RESPONSE_BODY = '256kb';

const bad = badField;

/** The body, checked against the contract and the T76 rules (lines only with CA, CA needs them). */
export function parseOrderResponseBody(body: unknown): OrderResponseSpec {
  const parsed = OrderResponseInput.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') ?? '';
    throw bad(`${field ? `${field}: ` : ''}${issue?.message ?? 'invalid body'}`, field || undefined);
  }
  const b = parsed.data;
  const spec: OrderResponseSpec = {
    responseCode: b.status,
    ...(b.note !== undefined ? { note: b.note } : {}),
    ...(b.lines
      ? {
          lines: b.lines.map((l) => ({
            lineId: l.lineId,
            statusCode: l.status as OrderLineStatus,
            ...(l.quantity !== undefined ? { quantity: l.quantity } : {}),
            ...(l.note !== undefined ? { note: l.note } : {}),
          })),
        }
      : {}),
  };
  const problem = orderResponseInputProblem(spec);
  if (problem) throw bad(problem);
  return spec;
}

/**
 * Purchase orders and Order Responses (Peppol BIS Ordering 3): `purchaseOrder/send` takes an order of the party (the
 * buyer) with the upload rules of `salesInvoice/send` and starts its sendOrder run; what can be judged at once (XML,
 * format, the buyer the party may act for) is answered at once, before anything is stored. `salesOrder/{id}/response`
 * answers a received order (the party is the seller), one run per (order, status).
 */
export function registerOrderRoutes(router: Router, deps: OrderRouteDeps): void {
  const party = requireParty(deps.directory);

  router.post('/api/v1/:partyId/purchaseOrder/send', party, async (req: Request, res: Response) => {
    const { tenantId, partyId, legalEntityId } = partyOf(res);
    const header = req.get('X-Service-DocumentId');
    if (header !== undefined && !isUuid(header.trim()))
      throw new GatewayError('INVALID_DOCUMENT_ID', 'X-Service-DocumentId must be a UUID (never the order number)');
    const documentId = (header?.trim() ?? randomUUID()).toLowerCase();
    if (!deps.workflows.startSendOrder)
      throw new GatewayError('NOT_IMPLEMENTED', 'Sending orders is not available on this server');
    if (await deps.documents.isAccepted(tenantId, documentId)) throw conflict(documentId);

    let upload: ReceivedUpload;
    try {
      upload = await receiveUpload(req, deps.blobs, deps.maxUploadBytes, { tenantId, documentId });
    } catch (e) {
      if (isGatewayError(e) && e.code === 'PAYLOAD_TOO_LARGE') res.set('Connection', 'close');
      throw e;
    }
    const refused = await orderUploadProblem(
      deps,
      tenantId,
      { partyId, legalEntityId },
      await deps.blobs.read(upload.blobId, deps.maxUploadBytes),
    );
    if (refused) {
      await deps.blobs.delete(upload.blobId);
      const code =
        refused.stage === 'sender'
          ? 'FORBIDDEN'
          : refused.reasonCode === 'WRONG_FORMAT' || refused.stage === 'routing'
            ? 'UNPROCESSABLE'
            : refused.reasonCode;
      throw new GatewayError(code as 'FORBIDDEN', `Not a purchase order this party can send: ${refused.reason}`, {
        details: { reason: refused.reasonCode },
      });
    }
    await storeRecord(deps, { tenantId, partyId, legalEntityId, documentId, channel: 'peppol', upload });
    await deps.workflows.startSendOrder({ tenantId, documentId });
    let accepted: boolean;
    try {
      accepted = await withStorageRetries(() => deps.documents.accept(tenantId, documentId));
    } catch (e) {
      if (!isTransientStorageError(e)) throw e;
      throw new GatewayError(
        'STORAGE_FAILED',
        'The order is stored and its sending has started, but its acceptance could not be recorded; ' +
          'repeat the request with the same X-Service-DocumentId',
        { cause: e, details: { documentId } },
      );
    }
    if (!accepted) throw conflict(documentId);
    deps.logger.info({ requestId: requestIdOf(req), tenantId, documentId }, 'purchase order accepted');
    res.status(200).json({ id: documentId });
  });

  router.get('/api/v1/:partyId/purchaseOrder/:documentId/status', party, async (req: Request, res: Response) => {
    const { tenantId, partyId } = partyOf(res);
    const documentId = documentIdParam(req);
    const doc = await deps.documents.findForParty(tenantId, partyId, documentId);
    // Before its run's check an uploaded order has no format yet.
    if (!doc || doc.direction !== 'outbound' || (doc.format && doc.format.id !== ORDER_FORMAT_ID))
      throw new GatewayError('DOCUMENT_NOT_FOUND', `Purchase order ${documentId} not found`);
    res.json(documentStatusView(doc));
  });

  const bodyJson = jsonBody(MAX_ORDER_RESPONSE_BODY, 'the response');

  router.post(
    '/api/v1/:partyId/salesOrder/:documentId/response',
    party,
    bodyJson,
    async (req: Request, res: Response) => {
      const { tenantId, partyId } = partyOf(res);
      const documentId = documentIdParam(req);
      const spec = parseOrderResponseBody(req.body);
      const doc = await deps.documents.findForParty(tenantId, partyId, documentId);
      if (!doc || doc.direction !== 'inbound' || doc.format?.id !== ORDER_FORMAT_ID)
        throw new GatewayError('DOCUMENT_NOT_FOUND', `Received order ${documentId} not found`);
      const responseId = sentOrderResponseId(tenantId, documentId, spec.responseCode);
      // What the run will build, built now: an order that cannot be answered is the caller's 422, not a failed run.
      const bytes = await deps.blobs.read(doc.blobId, deps.maxUploadBytes);
      const built = orderResponseFor(bytes, spec, { id: responseId, issuedAt: new Date() });
      if (typeof built === 'string')
        throw new GatewayError('UNPROCESSABLE', `Order ${documentId} cannot be answered so: ${built}`, {
          details: { documentId },
        });
      if (!deps.workflows.startSendOrderResponse)
        throw new GatewayError('NOT_IMPLEMENTED', 'Sending Order Responses is not available on this server');
      const input: SendOrderResponseInput = {
        tenantId,
        documentId,
        responseCode: spec.responseCode,
        ...(spec.note !== undefined ? { note: spec.note } : {}),
        ...(spec.lines ? { lines: spec.lines.map((l) => ({ ...l })) } : {}),
      };
      const started = await deps.workflows.startSendOrderResponse(input);
      if (started === 'already-started')
        throw new GatewayError(
          'CONFLICT',
          `An Order Response with status ${spec.responseCode} was already sent for order ${documentId}`,
          { details: { documentId, responseId } },
        );
      res.status(202).json({
        id: responseId,
        documentId,
        status: spec.responseCode,
        run: sendOrderResponseWorkflowId(tenantId, documentId, spec.responseCode),
      });
    },
  );
}
