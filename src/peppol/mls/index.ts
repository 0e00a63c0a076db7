/**
 * Peppol Message Level Status (MLS 1.0): build, read and check MLS documents, and the policy of when and where the
 * receiving access point sends one. Pure: no I/O, no storage, no workflows.
 */
export * from './types';
export { buildMls, type BuiltMls, type MlsBuildInput, type MlsLineInput } from './build';
export { readMls, ruleIdOf } from './read';
export {
  isMlsDocumentType,
  mlsAddress,
  mlsDecision,
  peppolHookMlsTypes,
  type MlsAddress,
  type MlsAddressInput,
  type MlsDecision,
  type MlsDecisionInput,
  type MlsTypeHook,
  type MlsVerdict,
} from './policy';
