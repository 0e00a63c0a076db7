import { z } from 'zod';
import type { ResponseContract, RouteContract } from './route-contract';

/** Spec 2.6: the body of a manual message-level status. */
export const MlsResponseInput = z
  .object({
    status: z.enum(['AB', 'AP', 'RE']).meta({ description: 'AB acknowledged, AP accepted, RE rejected' }),
    description: z.string().optional().meta({ description: 'Explanation; required for RE' }),
    lines: z
      .array(
        z.object({
          statusReasonCode: z.enum(['FD', 'SV', 'BV', 'BW']),
          description: z.string(),
        }),
      )
      .optional()
      .meta({ description: 'Only for RE, with at least one FD, SV or BV (BW only beside one of them)' }),
  })
  .strict()
  .meta({ id: 'MlsResponseInput' });

export const MlsResponseStarted = z
  .object({ id: z.string(), run: z.string() })
  .meta({ id: 'MlsResponseStarted', description: 'The received document answered and the run sending its MLS' });

export function mlsRoutes(h: {
  problem: (description: string) => ResponseContract;
  authenticated: Record<number, ResponseContract>;
}): RouteContract[] {
  const { problem, authenticated } = h;
  return [
    {
      method: 'post',
      path: '/api/v1-beta/generic/:documentId/response',
      summary:
        'Send a message-level status (MLS) for a document received over Peppol by one of your parties (meant for ' +
        'testing; one MLS per document): MessageLevelStatusSent follows once delivered',
      tags: ['Documents'],
      auth: true,
      params: { documentId: 'Id of the received document (from InvoiceReceived)' },
      requestBody: { description: 'The status', content: { 'application/json': MlsResponseInput } },
      responses: {
        202: { description: 'Sending started', content: { 'application/json': MlsResponseStarted } },
        ...authenticated,
        400: problem('Invalid body: unknown status or reason code, lines without RE, RE without a failure line'),
        404: problem('No received document with this id within reach of the token'),
        409: problem('An MLS was already sent for the document, or it did not arrive over Peppol'),
        415: problem('Body is not application/json'),
        503: problem('The sending run could not be started; retry'),
      },
    },
  ];
}
