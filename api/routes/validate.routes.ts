import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import { truncateForEcho } from '../../src/core/truncate';
import { createValidator, type Validator } from '../../src/validation';
import {
  declaredKind,
  kindMismatch,
  readBody,
  refuseContentEncoding,
  sniffDocumentKind,
  SNIFF_BYTES,
} from '../read-body';

export interface ValidateRouteDeps {
  /** Where the rule packs are; used to build the validator on first use when none is given. */
  rulesDir: string;
  /** Previous pack versions still accepted (config validation.acceptedPrevious). */
  acceptedPrevious?: readonly string[];
  maxUploadBytes: number;
  /** A Validator, or the pool of validation threads (the API process's, so SaxonJS never holds its event loop). */
  validator?: Pick<Validator, 'validate'>;
}

export const ACCEPTED = /^(application\/xml|text\/xml|application\/[a-z0-9.+-]+\+xml|application\/pdf)$/;

export function queryString(req: Request, name: string): string | undefined {
  const v = req.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new GatewayError('BAD_REQUEST', `${name} must be given once, as a string`);
  return v.trim() === '' ? undefined : v;
}

/** 415 unless the body is XML or a PDF (the generic document endpoints: validate, transform). */
function mediaTypeOf(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export function requireDocumentContentType(req: Request): void {
  const type = mediaTypeOf(req);
  if (!ACCEPTED.test(type)) {
    const shown = truncateForEcho(type, 100) || '(none)';
    throw new GatewayError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Type "${shown}" is not accepted; send application/xml, text/xml or application/pdf`,
    );
  }
}

/**
 * The whole body of a generic document endpoint: bounded, not empty, not compressed, and not a PDF declared as XML
 * or XML declared as PDF (anything else that is not XML is left to format detection, which says what it found); a
 * refused one closes the connection.
 */
export async function readDocumentBody(req: Request, res: Response, limit: number): Promise<Buffer> {
  let body: Buffer;
  try {
    refuseContentEncoding(req);
    body = await readBody(req, limit);
  } catch (e) {
    res.set('Connection', 'close');
    throw e;
  }
  if (body.length === 0) throw new GatewayError('BAD_REQUEST', 'Request body is empty');
  const type = mediaTypeOf(req);
  const expected = declaredKind(type);
  const found = sniffDocumentKind(body.subarray(0, SNIFF_BYTES), true, expected) ?? 'other';
  if (found !== expected && found !== 'other') throw kindMismatch(type, found);
  return body;
}

/**
 * POST /api/v1/generic/validate?sourceFormat=&ruleSet= (decisions.md "Validate"): detects the format, validates with
 * the pinned official artefacts and answers the result as data. Nothing is stored and no event fires.
 */
export function registerValidateRoutes(router: Router, deps: ValidateRouteDeps): void {
  // Built with the app, so a bad manifest or RULES_ACCEPTED_PREVIOUS stops start-up; packs still load on first use.
  const validator =
    deps.validator ??
    createValidator({
      rulesDir: deps.rulesDir,
      ...(deps.acceptedPrevious ? { acceptedPrevious: deps.acceptedPrevious } : {}),
    });

  router.post('/api/v1/generic/validate', async (req: Request, res: Response) => {
    requireDocumentContentType(req);
    const sourceFormat = queryString(req, 'sourceFormat');
    const ruleSet = queryString(req, 'ruleSet');
    const body = await readDocumentBody(req, res, deps.maxUploadBytes);
    const result = await validator.validate(body, {
      ...(sourceFormat ? { sourceFormat } : {}),
      ...(ruleSet ? { ruleSet } : {}),
    });
    res.status(200).json(result);
  });
}
