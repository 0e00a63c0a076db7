import { z } from 'zod';
import { ORDER_LINE_STATUS_CODES } from '../../src/peppol/order-response';
import type { ResponseContract, RouteContract } from './route-contract';

/** Most order lines one response answers; longest text. */
export const MAX_RESPONSE_LINES = 500;
export const MAX_ORDER_RESPONSE_TEXT = 1000;

const text = z.string().trim().min(1).max(MAX_ORDER_RESPONSE_TEXT);
const lineStatusCodes = Object.keys(ORDER_LINE_STATUS_CODES) as [string, ...string[]];

/** The seller's verdict on a received order (Peppol BIS Ordering 3, Order Response T76). */
export const OrderResponseInput = z
  .object({
    status: z.enum(['AB', 'AP', 'RE', 'CA']).meta({
      description:
        'AB acknowledged, AP accepted, RE rejected, CA conditionally accepted (needs lines; the others carry none)',
    }),
    note: text.optional().meta({ description: 'Free text for the buyer (cbc:Note)' }),
    lines: z
      .array(
        z
          .object({
            lineId: z
              .string()
              .trim()
              .min(1)
              .max(100)
              .meta({ description: 'The order line answered (its LineItem ID)' }),
            status: z.enum(lineStatusCodes).meta({
              description:
                'Line status (UNCL1229 subset): 1 added, 3 changed, 5 accepted, 7 not accepted, 42 delivered',
            }),
            quantity: z
              .string()
              .regex(/^\d{1,12}(\.\d{1,6})?$/)
              .optional()
              .meta({ description: 'The quantity the seller confirms, in the order line unit' }),
            note: text.optional(),
          })
          .strict(),
      )
      .max(MAX_RESPONSE_LINES)
      .optional()
      .meta({ description: 'Only with CA: one answer per order line concerned (PEPPOL-T76-R007..R010)' }),
  })
  .strict()
  .meta({ id: 'OrderResponseInput' });

export const OrderResponseStarted = z
  .object({
    id: z.string().describe('The Order Response document (generic download; the OrderResponseSent* documentId)'),
    documentId: z.string().describe('The received order answered'),
    status: z.string(),
    run: z.string().describe('The run sending it'),
  })
  .meta({ id: 'OrderResponseStarted' });

export function orderRoutes(h: {
  problem: (description: string) => ResponseContract;
  partyScoped: Record<number, ResponseContract>;
  partyParam: Record<string, string>;
  DocumentStatus: z.ZodType;
  DocumentAccepted: z.ZodType;
}): RouteContract[] {
  const { problem, partyScoped, partyParam, DocumentStatus, DocumentAccepted } = h;
  return [
    {
      method: 'post',
      path: '/api/v1/:partyId/purchaseOrder/send',
      summary:
        'Upload a purchase order (Peppol BIS Ordering 3 Order) for delivery to its seller over Peppol: checked ' +
        'with the pinned official rules, OrderSent, OrderSentRetry or OrderSentError follow',
      tags: ['Orders'],
      auth: true,
      params: partyParam,
      headers: { 'X-Service-DocumentId': 'Optional UUID chosen by the caller; makes the upload idempotent' },
      requestBody: {
        description: 'The order XML, raw or as the single file of a multipart form',
        content: { 'application/xml': null, 'text/xml': null, 'multipart/form-data': null },
      },
      responses: {
        200: { description: 'Stored and sending started', content: { 'application/json': DocumentAccepted } },
        ...partyScoped,
        400: problem('Malformed or unsafe XML (DTDs, entities), unknown format, X-Service-DocumentId not a UUID'),
        403: problem("The order's buyer is not the party, nor a party of its legal entity (SENDER_NOT_ALLOWED)"),
        409: problem('This X-Service-DocumentId was already processed, or uploaded with other content'),
        413: problem('Body too large; nothing was stored'),
        415: problem('Content-Type or Content-Encoding not accepted'),
        422: problem('Not a Peppol Order 3 (an invoice, say), or an order without buyer or seller address'),
        501: problem('Sending orders is not available on this server'),
        503: problem('Stored, but sending could not be started; retry with the same X-Service-DocumentId'),
      },
    },
    {
      method: 'get',
      path: '/api/v1/:partyId/purchaseOrder/:documentId/status',
      summary: 'Processing state and history of a sent purchase order',
      tags: ['Orders'],
      auth: true,
      params: { ...partyParam, documentId: 'Document id returned by the upload' },
      responses: {
        200: { description: 'Current state and history', content: { 'application/json': DocumentStatus } },
        ...partyScoped,
        404: problem('No purchase order with this id for this party'),
      },
    },
    {
      method: 'post',
      path: '/api/v1/:partyId/salesOrder/:documentId/response',
      summary:
        'Send an Order Response (Peppol BIS Ordering 3, T76) for a received order to its buyer over Peppol: ' +
        'OrderResponseSent, OrderResponseSentRetry or OrderResponseSentError follow. One response per order and status',
      tags: ['Orders'],
      auth: true,
      params: { ...partyParam, documentId: 'Id of the received order (from OrderReceived)' },
      requestBody: { description: 'The verdict', content: { 'application/json': OrderResponseInput } },
      responses: {
        202: { description: 'Sending started', content: { 'application/json': OrderResponseStarted } },
        ...partyScoped,
        400: problem('Malformed JSON, unknown field, status or line status, lines with AB/AP/RE, CA without lines'),
        404: problem('No received order with this id for this party'),
        409: problem('A response with this status was already sent for the order'),
        413: problem('Body over 256 KiB'),
        415: problem('Body is not application/json'),
        422: problem('The order cannot be answered (no buyer or seller address, a line it does not have)'),
        501: problem('Sending Order Responses is not available on this server'),
        503: problem('The sending run could not be started; retry'),
      },
    },
  ];
}
