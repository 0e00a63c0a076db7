import { z } from 'zod';
import type { ResponseContract, RouteContract } from './route-contract';

/** The body of a request for another tax report of an invoice. */
export const TaxReportRequest = z
  .object({
    reportType: z.enum(['submit', 'resubmit', 'disregard']).meta({
      description:
        'submit: again, after a first report that was not accepted; resubmit (R): a correction of an accepted ' +
        'report; disregard (D): withdraw the accepted report (nothing follows it)',
    }),
  })
  .meta({ id: 'TaxReportRequest' });

export const TaxReportStarted = z
  .object({
    id: z.string().uuid(),
    report: z.number().int().min(2).describe("Which report of the document this is (the gateway's own is 1)"),
    reportType: z.enum(['submit', 'resubmit', 'disregard']),
    run: z.string().describe("The report's run"),
  })
  .meta({
    id: 'TaxReportStarted',
    description: 'The report started; TaxReportSent or TaxReportError follows with this report number and type',
  });

/** Beyond the contract: another tax report of a sales invoice (C2) or a received invoice (C3). */
export function taxReportRoutes(h: {
  problem: (description: string) => ResponseContract;
  partyScoped: Record<number, ResponseContract>;
  partyParam: Record<string, string>;
}): RouteContract[] {
  const { problem, partyScoped, partyParam } = h;
  return (['salesInvoice', 'purchaseInvoice'] as const).map((kind) => ({
    method: 'post',
    path: `/api/v1/:partyId/${kind}/:documentId/taxReport`,
    summary:
      `Report a ${kind === 'salesInvoice' ? 'sales invoice (C2)' : 'received invoice (C3)'} to the tax authority ` +
      'again: a submit after a report that was not accepted, a resubmit or a disregard',
    tags: [kind === 'salesInvoice' ? 'Sales invoices' : 'Documents'],
    auth: true,
    params: { ...partyParam, documentId: 'The reported document' },
    requestBody: { description: 'Which report', content: { 'application/json': TaxReportRequest } },
    responses: {
      202: { description: 'The report started', content: { 'application/json': TaxReportStarted } },
      ...partyScoped,
      400: problem('reportType missing or not submit, resubmit or disregard'),
      404: problem('No such document for this party'),
      409: problem(
        'The report may not follow now: the first report has not ended, another is in progress, a submit was ' +
          'accepted already (resubmit instead), a resubmit or disregard has no accepted submit, or the report was ' +
          'disregarded',
      ),
      415: problem('Body not application/json'),
      503: problem('Tax reporting is not configured on this gateway'),
    },
  }));
}
