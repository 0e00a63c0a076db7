import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import type { BlobStore } from '../../src/storage/blob-store';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRepository } from '../../src/storage/document.repository';
import { invoiceResponseInputProblem } from '../../src/peppol/invoice-response';
import {
  invoiceResponseFor,
  sentInvoiceResponseId,
  type InvoiceResponseSpec,
} from '../../src/receiving/invoice-response-send';
import {
  sendInvoiceResponseWorkflowId,
  type SendInvoiceResponseInput,
} from '../../workflows/contracts/send-invoice-response';
import { InvoiceResponseInput } from '../contracts/invoice-response';
import { documentIdParam, partyOf, requireParty } from '../access';
import type { WorkflowStarter } from '../workflow-client';
import { badField, jsonBody } from '../request';

export interface InvoiceResponseRouteDeps {
  directory: DirectoryRepository;
  documents: DocumentRepository;
  blobs: BlobStore;
  workflows: WorkflowStarter;
  maxUploadBytes: number;
}

/** Largest body accepted: a status, a note and at most 40 clarifications fit many times over. */
export const MAX_RESPONSE_BODY = '64kb';

const bad = badField;

/** The body, checked against the contract and the T111 rules (UQ / RE need a clarification, PPD only with PD). */
export function parseInvoiceResponseBody(body: unknown): InvoiceResponseSpec {
  const parsed = InvoiceResponseInput.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') ?? '';
    throw bad(`${field ? `${field}: ` : ''}${issue?.message ?? 'invalid body'}`, field || undefined);
  }
  const b = parsed.data;
  const spec: InvoiceResponseSpec = {
    statusCode: b.status,
    ...(b.note !== undefined ? { note: b.note } : {}),
    ...(b.reasons ? { reasons: b.reasons.map((r) => ({ code: r.code, ...(r.text ? { text: r.text } : {}) })) } : {}),
    ...(b.actions ? { actions: b.actions.map((a) => ({ code: a.code, ...(a.text ? { text: a.text } : {}) })) } : {}),
  };
  const problem = invoiceResponseInputProblem(spec);
  if (problem) throw bad(problem);
  return spec;
}

const INVOICE_TYPES = new Set(['Invoice', 'CreditNote']);

/**
 * POST /api/v1/{partyId}/purchaseInvoice/{documentId}/response: the party (the buyer) answers a received invoice or
 * credit note with an Invoice Response, sent to its supplier over Peppol by its own run. One run per (invoice,
 * status): the same status again is a 409. Documents of other parties and tenants, and received documents that are no
 * invoice, are 404.
 */
export function registerInvoiceResponseRoutes(router: Router, deps: InvoiceResponseRouteDeps): void {
  const party = requireParty(deps.directory);
  const bodyJson = jsonBody(MAX_RESPONSE_BODY, 'the response');

  router.post(
    '/api/v1/:partyId/purchaseInvoice/:documentId/response',
    party,
    bodyJson,
    async (req: Request, res: Response) => {
      const { tenantId, partyId } = partyOf(res);
      const documentId = documentIdParam(req);
      const spec = parseInvoiceResponseBody(req.body);
      const doc = await deps.documents.findForParty(tenantId, partyId, documentId);
      if (!doc || doc.direction !== 'inbound' || !INVOICE_TYPES.has(doc.format?.documentType ?? ''))
        throw new GatewayError('DOCUMENT_NOT_FOUND', `Received invoice ${documentId} not found`);
      const responseId = sentInvoiceResponseId(tenantId, documentId, spec.statusCode);
      // What the run will build, built now: an invoice that cannot be answered is the caller's 422, not a failed run.
      const bytes = await deps.blobs.read(doc.blobId, deps.maxUploadBytes);
      const built = invoiceResponseFor(bytes, spec, { id: responseId, issuedAt: new Date() });
      if (typeof built === 'string')
        throw new GatewayError('UNPROCESSABLE', `Invoice ${documentId} cannot be answered: ${built}`, {
          details: { documentId },
        });
      if (!deps.workflows.startSendInvoiceResponse)
        throw new GatewayError('NOT_IMPLEMENTED', 'Sending Invoice Responses is not available on this server');
      const input: SendInvoiceResponseInput = {
        tenantId,
        documentId,
        statusCode: spec.statusCode,
        ...(spec.note !== undefined ? { note: spec.note } : {}),
        ...(spec.reasons ? { reasons: [...spec.reasons] } : {}),
        ...(spec.actions ? { actions: [...spec.actions] } : {}),
      };
      const started = await deps.workflows.startSendInvoiceResponse(input);
      if (started === 'already-started')
        throw new GatewayError(
          'CONFLICT',
          `An Invoice Response with status ${spec.statusCode} was already sent for invoice ${documentId}`,
          { details: { documentId, responseId } },
        );
      res.status(202).json({
        id: responseId,
        documentId,
        status: spec.statusCode,
        run: sendInvoiceResponseWorkflowId(tenantId, documentId, spec.statusCode),
      });
    },
  );
}
