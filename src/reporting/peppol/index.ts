/**
 * Peppol network reporting: the items recorded per AS4 message, the Transaction Statistics Report 1.0 and the End
 * User Statistics Report 1.1 of a month (aggregate, render, validate with the official artefacts), and the monthly
 * use case that stores and sends them (docs/decisions.md "Peppol network reporting").
 */
export * from './types';
export { reportingMonth, monthOf, previousMonth } from './month';
export { aggregateTsr, aggregateEusr, itemsOfMonth, countsForEusr } from './aggregate';
export {
  renderTsr,
  renderEusr,
  TSR_NAMESPACE,
  EUSR_NAMESPACE,
  TSR_CUSTOMIZATION_ID,
  EUSR_CUSTOMIZATION_ID,
  REPORTING_PROFILE_ID,
} from './render';
export { validateReport, assertValidReport, reportErrors, REPORT_RULE_PACKS, REPORT_FORMATS } from './validate';
export {
  sentItem,
  receivedItem,
  recordSentExchange,
  recordReceivedExchanges,
  countryOfLegalEntity,
  type ReportingItemSink,
  type ReceivedExchange,
  type ExchangedHeader,
} from './items';
export {
  prepareReport,
  sendReport,
  buildReport,
  reporterSeatId,
  reportDocumentId,
  NETWORK_REPORTS_TENANT,
  REPORT_KINDS,
  REPORT_DOCUMENT_TYPES,
  REPORT_PROCESS,
  type NetworkReportingDeps,
  type NetworkReportingSettings,
  type PreparedReport,
} from './monthly';
