/**
 * The Peppol Tax Data Document (TDD) in its profiles (the ViDA pilot, the Slovak Republic): plan which reports a
 * document needs, derive each from the EN 16931 model, render it in the authority's profile, validate it with the
 * profile's pinned official artefacts. Submitting, acknowledgements and the workflow step are not part of this module.
 */
export * from './types';
export {
  DEFAULT_TDD_PROFILE,
  TDD_PROFILE_IDS,
  TDD_PROFILES,
  tddProfile,
  tddProfileOfNamespace,
  type TddProfile,
  type TddProfileVersion,
} from './profiles';
export {
  parseTddConfig,
  tddProfileOf,
  tddTransport,
  VIDA_TDD_DOCUMENT_TYPE_ID,
  VIDA_TDD_PROCESS_ID,
  type TddTransport,
} from './config';
export { TDD_INVOICE_UUID_NAMESPACE, invoiceUuidOf, tddInvoiceUuid, type InvoiceUuidInput } from './invoice-uuid';
export { planTddReports, documentScope, vatCountry, sellerCountry, buyerCountry, type TddDirection } from './plan';
export { deriveTdd, missingTerms, TddDerivationError } from './derive';
export { renderTdd, TDD_NAMESPACE, TDD_CUSTOMIZATION_ID, TDD_PROFILE_ID } from './render';
export { validateTdd, tddFormat, tddRulePacks, TDD_RULE_PACKS } from './validate';
export { compareTdd, tddTerms, tddTermOf, type TddTermDifference } from './compare';
