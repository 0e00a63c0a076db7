import { z } from 'zod';
import type { ResponseContract, RouteContract } from './route-contract';

/*
 * Contract of POST /api/v1/generic/transform (spec 4.9; decisions.md "Transformation"). Built by a function of
 * index.ts's shared response helpers; the route types come from route-contract.ts (index.ts, which imports this
 * file, re-exports them).
 */

const FormatRef = z.object({
  id: z.string(),
  name: z.string(),
  syntax: z.string(),
  documentType: z.string(),
  customizationId: z.string().optional(),
  container: z.literal('pdf').optional().meta({ description: 'Factur-X targets: the XML travels in a PDF/A-3' }),
  attachment: z
    .string()
    .optional()
    .meta({ description: 'Factur-X targets: the embedded file name (factur-x.xml or xrechnung.xml)' }),
});

export const TransformReport = z
  .object({
    source: FormatRef,
    target: FormatRef,
    unmapped: z.array(z.object({ path: z.string(), text: z.string().optional() })),
    notCarried: z.array(z.string()),
    filled: z.array(z.string()),
    changed: z.array(z.string()),
  })
  .meta({ id: 'TransformReport', description: 'What a conversion could not carry over, filled in or changed' });

export const TransformResponse = z
  .object({
    document: z.string().meta({ description: 'The converted XML; for a Factur-X target the PDF, base64-encoded' }),
    documentEncoding: z.literal('base64').optional().meta({ description: 'Set when `document` is base64 (a PDF)' }),
    contentType: z.literal('application/pdf').optional().meta({ description: 'Set when `document` is a PDF' }),
    xml: z.string().optional().meta({ description: 'Factur-X targets: the CII embedded in the PDF' }),
    report: TransformReport,
  })
  .meta({
    id: 'TransformResponse',
    description:
      'The converted document with the conversion report (a PDF target: the PDF base64-encoded and its embedded XML)',
  });

const REPORT_HEADERS = {
  'X-Transform-Source-Format': 'Format id of the source (detected or given)',
  'X-Transform-Target-Format': 'Format id of the result',
  'X-Transform-Unmapped': 'Number of source elements the EN 16931 model could not hold (listed in the report)',
  'X-Transform-Not-Carried': 'Number of model terms the target syntax could not carry (listed in the report)',
};

export function transformRoutes(h: {
  problem: (d: string) => ResponseContract;
  authenticated: Record<number, ResponseContract>;
}): RouteContract[] {
  return [
    {
      method: 'post',
      path: '/api/v1/generic/transform',
      summary: 'Convert an invoice or credit note to another format; nothing is stored and no event fires',
      tags: ['Documents'],
      auth: true,
      query: {
        targetFormat: 'Required. Target format URN (URL-encoded, `#` as `%23`) or format id (e.g. `xrechnung-cii`)',
        sourceFormat: 'Optional source format URN or id, when detection should not decide',
        targetSyntax:
          'Optional `UBL` or `CII`, for a URN both syntaxes share (EN 16931, BIS 3, XRechnung, NLCIUS); default: ' +
          'the source syntax',
        report:
          'Optional `true`: answer JSON `{ document, report }` (same as `Accept: application/json`); for a Factur-X ' +
          'target `document` is the PDF in base64 and `xml` the embedded CII',
      },
      requestBody: {
        description: 'The source document (XML, or a Factur-X / ZUGFeRD PDF whose XML is converted), up to 24 MB',
        content: { 'application/xml': null, 'text/xml': null, 'application/pdf': null },
      },
      responses: {
        200: {
          description:
            'The converted XML, or for a Factur-X target (`facturx-basic`, `facturx-en16931`, `facturx-extended`, ' +
            '`facturx-xrechnung`) the PDF/A-3 with the CII embedded; with `Accept: application/json` / ' +
            '`report=true`, the document and the conversion report. Headers: X-Transform-Source-Format, ' +
            'X-Transform-Target-Format, X-Transform-Unmapped (count), X-Transform-Not-Carried (count)',
          content: { 'application/xml': null, 'application/pdf': null, 'application/json': TransformResponse },
          headers: REPORT_HEADERS,
        },
        ...h.authenticated,
        400: h.problem(
          'Body not XML or unsafe, source format not recognised, unknown targetFormat, or transformation not ' +
            'supported (`reason` TRANSFORMATION_NOT_SUPPORTED names why)',
        ),
        413: h.problem('Body larger than 24 MB'),
        415: h.problem('Content-Type or Content-Encoding not accepted, or body not of the declared type'),
        422: h.problem(
          'The document cannot be converted: `missing` lists the target rules and terms it lacks, `invalid` the ' +
            'values that are not valid',
        ),
      },
    },
  ];
}
