/** Validation with the pinned official artefacts: XSD through xmllint, Schematron through SaxonJS. */
export {
  installationFault,
  installationFaultDependency,
  validatorFailure,
  type ValidatorFailure,
} from './installation-fault';
export { createValidator, type Validator, type ValidatorOptions, type ValidateOptions } from './validator';
export {
  RulePackStore,
  type LoadedPack,
  type LoadedXsdPack,
  type LoadedSchematronPack,
  type PackStatus,
  type PackProblem,
} from './pack-store';
export {
  loadManifest,
  parseManifest,
  packFingerprint,
  canonicalJson,
  defaultManifestFile,
  type RulesManifest,
  type PackDefinition,
} from './manifest';
export { selectRulePacks, parseRuleSet, type PackRef, type Selection } from './selection';
export {
  reasonCodeOf,
  flagOf,
  type Assertion,
  type AssertionArtifact,
  type AssertionFlag,
  type ReasonCode,
  type RuleSetOutcome,
  type ValidationResult,
  type ValidatedFormat,
} from './types';
export {
  createValidatorPool,
  defaultWorkerScript,
  type ValidatorPool,
  type ValidatorPoolOptions,
  type ValidatorPoolStats,
} from './pool';
