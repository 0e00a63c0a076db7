import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import { inProcessTransform, type TransformRunner } from '../../src/transform';
import { queryString, readDocumentBody, requireDocumentContentType, setTransformHeaders } from '../request';

export interface TransformRouteDeps {
  maxUploadBytes: number;
  transform?: TransformRunner;
}

/** JSON instead of the bare document: `report=true`, or an Accept header that prefers application/json to XML/PDF. */
function wantsReport(req: Request): boolean {
  const flag = queryString(req, 'report');
  if (flag !== undefined) {
    if (flag !== 'true' && flag !== 'false') throw new GatewayError('BAD_REQUEST', 'report must be true or false');
    return flag === 'true';
  }
  // No Accept, */* or XML first: the XML itself (spec 4.9); JSON only when the client prefers it.
  return req.accepts(['application/xml', 'application/pdf', 'application/json']) === 'application/json';
}

/**
 * POST /api/v1/generic/transform?targetFormat=&sourceFormat=&targetSyntax=&report= (spec 4.9, decisions.md
 * "Transformation"): converts one document; nothing is stored and no event fires. A lossy conversion is never silent:
 * the counts are in X-Transform-* headers and the full report comes with `Accept: application/json` or `report=true`.
 */
export function registerTransformRoutes(router: Router, deps: TransformRouteDeps): void {
  const transform = deps.transform ?? inProcessTransform;
  router.post('/api/v1/generic/transform', async (req: Request, res: Response) => {
    requireDocumentContentType(req);
    const targetFormat = queryString(req, 'targetFormat');
    if (targetFormat === undefined)
      throw new GatewayError(
        'BAD_REQUEST',
        'targetFormat is required: the URN (or format id) of the format to convert to',
        { details: { reason: 'TARGET_FORMAT_MISSING' } },
      );
    const sourceFormat = queryString(req, 'sourceFormat');
    const targetSyntax = queryString(req, 'targetSyntax');
    if (targetSyntax !== undefined && targetSyntax !== 'UBL' && targetSyntax !== 'CII')
      throw new GatewayError('BAD_REQUEST', 'targetSyntax must be UBL or CII');
    const report = wantsReport(req);
    const body = await readDocumentBody(req, res, deps.maxUploadBytes);
    const result = await transform(body, {
      targetFormat,
      ...(sourceFormat ? { sourceFormat } : {}),
      ...(targetSyntax ? { targetSyntax } : {}),
    });
    setTransformHeaders(res, result.report);
    if (report) {
      // A PDF target: the PDF base64-encoded beside the embedded XML, so one JSON answer has both.
      if (result.pdf) {
        res.status(200).json({
          document: result.pdf.toString('base64'),
          documentEncoding: 'base64',
          contentType: 'application/pdf',
          xml: result.xml,
          report: result.report,
        });
        return;
      }
      res.status(200).json({ document: result.xml, report: result.report });
      return;
    }
    if (result.pdf) {
      res
        .status(200)
        .type('application/pdf')
        .set('Content-Disposition', `attachment; filename="${result.report.target.id}.pdf"`)
        .send(result.pdf);
      return;
    }
    res.status(200).type('application/xml').send(result.xml);
  });
}
