import type { Request, Response, Router } from 'express';
import { createValidator, type Validator } from '../../src/validation';
import { queryString, readDocumentBody, requireDocumentContentType } from '../request';

export interface ValidateRouteDeps {
  /** Where the rule packs are; used to build the validator on first use when none is given. */
  rulesDir: string;
  /** Previous pack versions still accepted (config validation.acceptedPrevious). */
  acceptedPrevious?: readonly string[];
  maxUploadBytes: number;
  /** A Validator, or the pool of validation threads (the API process's, so SaxonJS never holds its event loop). */
  validator?: Pick<Validator, 'validate'>;
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
    // Which engine ran each pack stays internal: the answer is the same whichever did.
    res.status(200).json({
      ...result,
      ruleSets: result.ruleSets.map((r) => ({ id: r.id, version: r.version, outcome: r.outcome })),
    });
  });
}
