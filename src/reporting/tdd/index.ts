/**
 * The Peppol ViDA pilot Tax Data Document (TDD): plan which reports a document needs, derive each from the EN 16931
 * model, render it, validate it with the pinned official artefacts. Submitting, acknowledgements and the workflow
 * step are not part of this module.
 */
export * from './types';
export { parseTddConfig, VIDA_TDD_DOCUMENT_TYPE_ID, VIDA_TDD_PROCESS_ID } from './config';
export { TDD_INVOICE_UUID_NAMESPACE, tddInvoiceUuid, type InvoiceUuidInput } from './invoice-uuid';
export { planTddReports, documentScope, vatCountry, sellerCountry, buyerCountry, type TddDirection } from './plan';
export { deriveTdd, missingTerms, TddDerivationError } from './derive';
export { renderTdd, TDD_NAMESPACE, TDD_CUSTOMIZATION_ID, TDD_PROFILE_ID } from './render';
export { validateTdd, TDD_RULE_PACKS } from './validate';
export { compareTdd, tddTerms, tddTermOf, type TddTermDifference } from './compare';
