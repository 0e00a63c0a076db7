/**
 * The reportTax workflow's contract: the tax report (digital reporting) of one invoice or credit note we sent (role
 * C2) or received (role C3). Plan → derive → render → validate → store the Tax Data Document (TDD), submit it over
 * Peppol AS4 to the tax authority's access point (C5) on the Peppol schedule, then wait for the authority's answer, a
 * Peppol MLS. One run per report: the gateway's own first report of the document, and each later one asked for
 * through the API (report 2, 3, …: a submit again, a resubmit, a disregard); beside delivery, never part of it.
 */
import type { TaxReportRef } from '../../src/core/document-states';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import type { TddReporterRole } from '../../src/reporting/tdd/types';

export const REPORT_TAX_WORKFLOW = 'reportTax';

/** The signal the receiving run sends when the authority's MLS about the report arrives. */
export const TAX_ACKNOWLEDGEMENT_SIGNAL = 'taxAcknowledgement';

export { reportTaxWorkflowId } from '../../src/core/identifiers';

/** What the worker tells the runs that may report (absent: tax reporting is not configured). */
export interface TaxReportingSettings {
  /** How long the run waits for the authority's MLS after its AS4 receipt. */
  acknowledgementTimeoutMs: number;
}

export interface ReportTaxInput {
  tenantId: string;
  /** The invoice or credit note reported. */
  documentId: string;
  direction: 'outbound' | 'inbound';
  /** A report after the first, asked for through the API (absent: the first, a submit). */
  report?: TaxReportRef;
  acknowledgementTimeoutMs: number;
  /** PEPPOL_SEND_RETRY_SCHEDULE, fixed at start. */
  peppolSchedule?: RetrySchedule;
}

/**
 * What the plan step found and stored: the report to submit, or why none is submitted. `ref` says which report of
 * the document it is (absent in runs started before there were later reports: the first).
 */
export type PreparedTaxReport = { ref?: TaxReportRef } & (
  | {
      kind: 'report';
      role: TddReporterRole;
      country: string;
      authority: string;
      /** The stored TDD (an outbound document of the party). */
      reportDocumentId: string;
      invoiceUuid: string;
      /** The service provider whose MLS answers the report (`iso6523-actorid-upis::0242:<SPID>` of the authority). */
      acknowledgedBy: string;
    }
  /** Not required (no authority for the country or role): recorded, no event. */
  | { kind: 'skipped'; role: TddReporterRole; country?: string; reason: string }
  /** Required but no valid report can be made (missing terms, the official rules refuse it): final. */
  | { kind: 'refused'; role: TddReporterRole; country?: string; authority?: string; reason: string }
);

export type PreparedReport = Extract<PreparedTaxReport, { kind: 'report' }>;

export interface TaxReportAttempt {
  tenantId: string;
  documentId: string;
  report: PreparedReport;
  attempt: number;
  firstAttemptAt: string;
}

export interface TaxReportAttemptResult {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
}

/** The authority's answer: its MLS, stored as the party's document. */
export interface TaxAcknowledgement {
  mlsDocumentId: string;
  /** The MLS's sender (`iso6523-actorid-upis::0242:…`): only the authority the report went to may answer it. */
  sender: string;
  /** MLS response code: AP (accepted), AB (accepted, with findings), RE (rejected). */
  responseCode: string;
  /** The MLS's description and its lines, flattened ("BV BR-01: …; …"). */
  reason?: string;
}

export type TaxReportOutcome = 'accepted' | 'rejected' | 'retry' | 'refused' | 'failed';

/**
 * One step of the report on the reported document's history, and its TaxReport* event (none for `submitted`: the AS4
 * receipt is not the authority's verdict).
 */
export interface TaxReportEventInput {
  tenantId: string;
  documentId: string;
  eventId: string;
  report: PreparedTaxReport;
  outcome: TaxReportOutcome | 'submitted';
  attempt?: number;
  messageId?: string;
  to?: string;
  endpoint?: string;
  statusCode?: string;
  reason?: string;
  nextAttemptOn?: string;
  mlsDocumentId?: string;
}

export interface ReportTaxResult {
  outcome: 'accepted' | 'rejected' | 'skipped' | 'refused' | 'failed';
  reportDocumentId?: string;
  attempts: number;
  statusCode?: string;
  reason?: string;
}
