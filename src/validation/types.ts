/** Validation results are data: what was checked, with which artefacts, and every assertion that fired. */

export type AssertionArtifact = 'schema' | 'business-rules';
export type AssertionFlag = 'error' | 'warning';
/**
 * Status reason codes of the Peppol MLS / UBL ApplicationResponse (spec 2.6): SV schema error, BV fatal business
 * rule, BW business rule warning.
 */
export type ReasonCode = 'SV' | 'BV' | 'BW';

export interface Assertion {
  artifact: AssertionArtifact;
  flag: AssertionFlag;
  ruleId: string;
  /** XPath of the offending node; for the PDF layer of a hybrid invoice, a path in the PDF such as /Catalog/AF. */
  location: string;
  text: string;
  reasonCode: ReasonCode;
  /** The rule pack that produced it. */
  ruleSet: string;
}

export interface RuleSetOutcome {
  id: string;
  version: string;
  /** passed: no error from this pack; failed: at least one; not-run: skipped because the schema check failed. */
  outcome: 'passed' | 'failed' | 'not-run';
  /**
   * Which engine evaluated the pack's business rules: the compiled rules, or SaxonJS (forced by configuration, a pack
   * the compiler cannot handle, or a dynamic error on this document, which SaxonJS then judges). Internal: the API
   * answers without it, so its answer is the same whichever engine ran.
   */
  engine?: RulesEngine;
}

export type RulesEngine = 'compiled' | 'saxon-js';

export interface ValidatedFormat {
  id: string;
  name: string;
  customizationId?: string;
  profileId?: string;
}

export interface ValidationResult {
  isValid: boolean;
  format: ValidatedFormat;
  ruleSets: RuleSetOutcome[];
  assertions: Assertion[];
  /** Set when a pack produced more assertions than are kept. */
  truncated?: boolean;
}

export function reasonCodeOf(artifact: AssertionArtifact, flag: AssertionFlag): ReasonCode {
  if (artifact === 'schema') return 'SV';
  return flag === 'error' ? 'BV' : 'BW';
}

/**
 * SVRL flags → our two flags. Schematron artefacts use fatal/error for rejections and warning/information for advice;
 * an assert without a flag (some national packs) is a rejection.
 */
export function flagOf(svrlFlag: string | undefined): AssertionFlag {
  const f = (svrlFlag ?? '').trim().toLowerCase();
  return f === 'warning' || f === 'information' || f === 'info' ? 'warning' : 'error';
}
