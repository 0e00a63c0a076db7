/**
 * The peppolReporting workflow's contract: one long-running run per gateway that sends the previous month's Peppol
 * network reports (TSR 1.0, EUSR 1.1) over AS4 between the 1st and the 15th of each month, and sleeps in between.
 */
export const PEPPOL_REPORTING_WORKFLOW = 'peppolReporting';

/** One run per gateway (every worker starts it; the id keeps it one). */
export const PEPPOL_REPORTING_WORKFLOW_ID = 'peppol-reporting';

export type NetworkReportKind = 'tsr' | 'eusr';

export interface PeppolReportingInput {
  /** Wait between attempts of a report that was not delivered; default 1 h. */
  retryEveryMs?: number;
  /** The last day of the month (UTC) on which reports are still sent; 15 per the reporting policy. */
  lastDay?: number;
  /** Months whose reports are settled (carried over continue-as-new; the newest few only). */
  settled?: string[];
  /** End the run once this month (`YYYY-MM`) is settled, instead of running on (a one-off run, the tests). */
  untilMonth?: string;
}

export interface NetworkReportStep {
  /** `YYYY-MM`. */
  month: string;
  kind: NetworkReportKind;
}

/** What preparing a report found: it exists (generated now or before) and whether it was delivered. */
export interface PreparedNetworkReport {
  documentId: string;
  created: boolean;
  delivered: boolean;
  attempts: number;
}

export interface NetworkReportAttempt extends NetworkReportStep {
  attempt: number;
}

export interface NetworkReportAttemptResult {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
}
