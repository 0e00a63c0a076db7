import { z } from 'zod';
import { STATUS_ACTIONS, STATUS_REASONS } from '../../src/peppol/invoice-response';
import type { ResponseContract, RouteContract } from './route-contract';

const reasonCodes = Object.keys(STATUS_REASONS) as [string, ...string[]];
const actionCodes = Object.keys(STATUS_ACTIONS) as [string, ...string[]];

/** Most clarifications of one kind a response carries; longest text. */
export const MAX_CLARIFICATIONS = 20;
export const MAX_RESPONSE_TEXT = 1000;

const text = z.string().trim().min(1).max(MAX_RESPONSE_TEXT);

/** The buyer's verdict on a received invoice (Peppol BIS Invoice Response 3). */
export const InvoiceResponseInput = z
  .object({
    status: z.enum(['AB', 'IP', 'UQ', 'RE', 'AP', 'PD']).meta({
      description:
        'AB acknowledged, IP in process, UQ under query, RE rejected (final), AP accepted, PD paid (final). UQ and ' +
        'RE need at least one reason or action',
    }),
    note: text.optional().meta({ description: 'Free text for the supplier (cbc:Note)' }),
    reasons: z
      .array(z.object({ code: z.enum(reasonCodes), text: text.optional() }).strict())
      .max(MAX_CLARIFICATIONS)
      .optional()
      .meta({
        description:
          'Clarification reasons (OpenPeppol code list OPStatusReason): NON, REF, LEG, REC, QUA, DEL, PRI, QTY, ITM, ' +
          'PAY, UNR, FIN, PPD (only with PD, with a text), OTH (a text is expected)',
      }),
    actions: z
      .array(z.object({ code: z.enum(actionCodes), text: text.optional() }).strict())
      .max(MAX_CLARIFICATIONS)
      .optional()
      .meta({
        description: 'Requested actions (OpenPeppol code list OPStatusAction): NOA, PIN, NIN, CNF, CNP, CNA, OTH',
      }),
  })
  .strict()
  .meta({ id: 'InvoiceResponseInput' });

export const InvoiceResponseStarted = z
  .object({
    id: z.string().describe('The Invoice Response document (generic download; the InvoiceResponseSent* documentId)'),
    documentId: z.string().describe('The received invoice answered'),
    status: z.string(),
    run: z.string().describe('The run sending it'),
  })
  .meta({ id: 'InvoiceResponseStarted' });

export function invoiceResponseRoutes(h: {
  problem: (description: string) => ResponseContract;
  partyScoped: Record<number, ResponseContract>;
  partyParam: Record<string, string>;
}): RouteContract[] {
  const { problem, partyScoped, partyParam } = h;
  return [
    {
      method: 'post',
      path: '/api/v1/:partyId/purchaseInvoice/:documentId/response',
      summary:
        'Send an Invoice Response (Peppol BIS Invoice Response 3) for a received invoice or credit note to its ' +
        'supplier over Peppol: InvoiceResponseSent, InvoiceResponseSentRetry or InvoiceResponseSentError follow. ' +
        'One response per invoice and status',
      tags: ['Documents'],
      auth: true,
      params: { ...partyParam, documentId: 'Id of the received invoice (from InvoiceReceived)' },
      requestBody: { description: 'The verdict', content: { 'application/json': InvoiceResponseInput } },
      responses: {
        202: { description: 'Sending started', content: { 'application/json': InvoiceResponseStarted } },
        ...partyScoped,
        400: problem('Malformed JSON, unknown field, status or code, or a combination the T111 rules refuse'),
        404: problem('No received invoice or credit note with this id for this party'),
        409: problem('A response with this status was already sent for the invoice'),
        413: problem('Body over 64 KiB'),
        415: problem('Body is not application/json'),
        422: problem('The invoice cannot be answered (no seller or buyer electronic address, no number)'),
        501: problem('Sending Invoice Responses is not available on this server'),
        503: problem('The sending run could not be started; retry'),
      },
    },
  ];
}
