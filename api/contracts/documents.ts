import { z } from 'zod';
import type { ResponseContract, RouteContract } from './route-contract';

/*
 * Contracts of a party's documents beyond the upload: the bulk listing (spec 4.10), a received document's status and
 * the injection of a document as if it had arrived (spec 1: sandbox and integration testing); decisions.md
 * "Received documents: validation, injection, listing".
 */

export const ReceivedValidationSummary = z
  .object({
    verdict: z.enum(['valid', 'invalid', 'not-validated']),
    reasonCodes: z
      .array(z.enum(['SV', 'BV', 'BW']))
      .optional()
      .meta({ description: 'invalid: the status reason codes of what failed (BW only beside fatal errors)' }),
    ruleIds: z.array(z.string()).optional().meta({ description: 'invalid: the failing rules, errors first' }),
    errorCount: z.number().int().optional(),
    warningCount: z.number().int().optional(),
    reason: z.string().optional().meta({ description: 'not-validated: why (no official rules for the format)' }),
  })
  .meta({ id: 'ValidationVerdict', description: 'The official-rule verdict on a document' });

export const DocumentListItem = z
  .object({
    id: z.string().uuid(),
    direction: z.enum(['sent', 'received']),
    kind: z
      .string()
      .nullable()
      .meta({ description: 'The document type found by detection (Invoice, CreditNote, Order, ...); null if unread' }),
    state: z.string(),
    createdBy: z.string(),
    createdOn: z.string().datetime({ offset: true }),
    contentType: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    format: z.object({ id: z.string(), name: z.string(), documentType: z.string() }).optional(),
    validation: ReceivedValidationSummary.optional(),
  })
  .meta({ id: 'DocumentListItem' });

export const DocumentList = z
  .object({
    documents: z.array(DocumentListItem).meta({ description: 'Oldest first (newest last)' }),
    nextCursor: z
      .string()
      .optional()
      .meta({
        description:
          'Present when more documents may follow: pass it as `cursor` for the next page (a page is short, even ' +
          'empty, when filters skipped more than 10000 documents)',
      }),
  })
  .meta({ id: 'DocumentList' });

export const DocumentArchiveManifest = z
  .object({
    documents: z
      .array(
        DocumentListItem.extend({
          file: z.string().meta({ description: 'Its entry in the archive: `<sent|received>/<id>.<xml|pdf>`' }),
        }),
      )
      .meta({ description: "The page's documents as the listing gives them, oldest first, with their entry names" }),
    nextCursor: z.string().optional().meta({ description: 'As in DocumentList; also the X-Next-Cursor header' }),
  })
  .meta({ id: 'DocumentArchiveManifest', description: 'manifest.json, the first entry of a documents archive' });

/** The listing's filters, which the archive takes as well. */
const PAGE_QUERY = {
  direction: 'Optional `sent` or `received`; both when absent',
  kind: 'Optional document type (Invoice, CreditNote, Order, ...; as `kind` in the answer, case-insensitive)',
  since: 'Optional ISO 8601 date-time: documents written at or after it',
  until: 'Optional ISO 8601 date-time: documents written before it',
  cursor: 'Optional `nextCursor` of the previous page (opaque; valid with the same filters)',
  limit: 'Optional page size, 1 to 1000, default 100',
};

export function documentRoutes<S extends z.ZodRawShape>(h: {
  problem: (description: string) => ResponseContract;
  partyScoped: Record<number, ResponseContract>;
  partyParam: Record<string, string>;
  DocumentStatus: z.ZodObject<S>;
  DocumentAccepted: z.ZodType;
}): RouteContract[] {
  const { problem, partyScoped, partyParam } = h;
  const ReceivedDocumentStatus = h.DocumentStatus.extend({
    verdict: ReceivedValidationSummary.optional().meta({ description: 'The validation verdict, once it ran' }),
  }).meta({ id: 'ReceivedDocumentStatus' });
  return [
    {
      method: 'get',
      path: '/api/v1/:partyId/documents',
      summary: "A page of the party's documents, sent and received, newest last, with a stable cursor",
      tags: ['Documents'],
      auth: true,
      params: partyParam,
      query: PAGE_QUERY,
      responses: {
        200: { description: 'One page', content: { 'application/json': DocumentList } },
        ...partyScoped,
        400: problem('Malformed party identifier, or a query value out of its range (the problem names it)'),
      },
    },
    {
      method: 'get',
      path: '/api/v1/:partyId/documents/archive',
      summary:
        'The same page of documents as one ZIP stream: first manifest.json (the page as the listing gives it, each ' +
        'item with its `file`, and `nextCursor`), then each document as stored, as `<sent|received>/<id>.<xml|pdf>`',
      tags: ['Documents'],
      auth: true,
      params: partyParam,
      query: PAGE_QUERY,
      responses: {
        200: {
          description:
            'The archive, streamed (no Content-Length). A document that cannot be read once streaming began cuts ' +
            'the connection before the ZIP central directory: a transfer that does not end cleanly is not an archive',
          content: { 'application/zip': null },
          headers: {
            'Content-Disposition': 'attachment; filename="documents.zip"',
            'X-Next-Cursor': "The next page's cursor, when another page exists (also in manifest.json)",
          },
        },
        ...partyScoped,
        400: problem('Malformed party identifier, or a query value out of its range (the problem names it)'),
      },
    },
    {
      method: 'get',
      path: '/api/v1/:partyId/purchaseInvoice/:documentId/status',
      summary: 'State, history, format and validation verdict of a received document',
      tags: ['Documents'],
      auth: true,
      params: { ...partyParam, documentId: 'Document id from the InvoiceReceived event' },
      responses: {
        200: { description: 'Current state and history', content: { 'application/json': ReceivedDocumentStatus } },
        ...partyScoped,
        404: problem('No such received document for this party'),
      },
    },
    {
      method: 'post',
      path: '/api/v1/:partyId/generic/receive',
      summary:
        'Inject a document as if it had arrived over the network for this party (sandbox and integration testing): ' +
        'the receive path runs (detection, validation, InvoiceReceived / InvoiceReceivedError with createdBy ' +
        'manualUpload)',
      tags: ['Documents'],
      auth: true,
      params: partyParam,
      headers: { 'X-Service-DocumentId': 'Optional UUID chosen by the caller; makes the injection idempotent' },
      requestBody: {
        description: 'The document XML or Factur-X PDF (up to 24 MB), raw or as the single file of a multipart form',
        content: { 'application/xml': null, 'text/xml': null, 'application/pdf': null, 'multipart/form-data': null },
      },
      responses: {
        200: { description: 'Stored and receiving started', content: { 'application/json': h.DocumentAccepted } },
        ...partyScoped,
        400: problem(
          'Malformed party identifier, X-Service-DocumentId not a UUID, empty or malformed body, more than one file ' +
            'part',
        ),
        409: problem('This X-Service-DocumentId names another document; `documentId` names it'),
        413: problem('Body larger than 24 MB; nothing was stored'),
        415: problem('Content-Type or Content-Encoding not accepted, or body not of the declared type'),
        503: problem('Stored, but receiving could not be started; retry with the same X-Service-DocumentId'),
      },
    },
  ];
}
