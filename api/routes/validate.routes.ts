import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import { createValidator, type Validator } from '../../src/validation';

export interface ValidateRouteDeps {
  /** Where the rule packs are; used to build the validator on first use when none is given. */
  rulesDir: string;
  /** Previous pack versions still accepted (config validation.acceptedPrevious). */
  acceptedPrevious?: readonly string[];
  maxUploadBytes: number;
  validator?: Validator;
}

export const ACCEPTED = /^(application\/xml|text\/xml|application\/[a-z0-9.+-]+\+xml|application\/pdf)$/;

export function queryString(req: Request, name: string): string | undefined {
  const v = req.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new GatewayError('BAD_REQUEST', `${name} must be given once, as a string`);
  return v.trim() === '' ? undefined : v;
}

/** The raw body, refused above `limit` bytes as it arrives (nothing is stored: validation keeps no document). */
export function readBody(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(new GatewayError('PAYLOAD_TOO_LARGE', `Request body of ${declared} bytes exceeds the limit of ${limit} bytes`, { details: { limit } }));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume();
        reject(new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes`, { details: { limit } }));
        return;
      }
      chunks.push(chunk);
    };
    let ended = false;
    req.on('data', onData);
    req.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
    // A client that goes away mid-body must not leave the request waiting for an end that never comes.
    req.on('close', () => {
      if (!ended) reject(new GatewayError('BAD_REQUEST', 'Request body incomplete: the connection closed'));
    });
  });
}

/**
 * POST /api/v1/generic/validate?sourceFormat=&ruleSet= (decisions.md "Validate"): detects the format, validates with
 * the pinned official artefacts and answers the result as data. Nothing is stored and no event fires.
 */
export function registerValidateRoutes(router: Router, deps: ValidateRouteDeps): void {
  // Built with the app, so a bad manifest or RULES_ACCEPTED_PREVIOUS stops start-up; packs still load on first use.
  const validator = deps.validator ?? createValidator({ rulesDir: deps.rulesDir, ...(deps.acceptedPrevious ? { acceptedPrevious: deps.acceptedPrevious } : {}) });

  router.post('/api/v1/generic/validate', async (req: Request, res: Response) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!ACCEPTED.test(type)) {
      throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Content-Type "${type || '(none)'}" is not accepted; send application/xml, text/xml or application/pdf`);
    }
    const sourceFormat = queryString(req, 'sourceFormat');
    const ruleSet = queryString(req, 'ruleSet');
    let body: Buffer;
    try {
      body = await readBody(req, deps.maxUploadBytes);
    } catch (e) {
      res.set('Connection', 'close');
      throw e;
    }
    if (body.length === 0) throw new GatewayError('BAD_REQUEST', 'Request body is empty');
    const result = await validator.validate(body, { ...(sourceFormat ? { sourceFormat } : {}), ...(ruleSet ? { ruleSet } : {}) });
    res.status(200).json(result);
  });
}
