import type { Invoice } from '../../en16931/model';
import { TAX_REPORT_TYPE_CODES, type TaxReportType } from '../../core/document-states';

/** TDT-007 Tax data type code: S submit, R resubmit (corrects an earlier report), D disregard (withdraws it). */
export type TddReportType = TaxReportType;
export const TDD_TYPE_CODES = TAX_REPORT_TYPE_CODES;

/** TDT-012 Reporter role: C2 reports for the supplier (sending side), C3 for the buyer (receiving side). */
export type TddReporterRole = 'C2' | 'C3';

/** TDT-006 Document scope: domestic, intra-community, international. */
export type TddDocumentScope = 'D' | 'IC' | 'INTL';

/**
 * The TDD specification version a document is written for, within its profile (profiles.ts). The ViDA pilot has both
 * (one namespace); 1.1.0 adds the Invoice Transmission UUID (TDT-018) and the C2 / C3 minimum field sets
 * (ibr-tdd-90..93). The Slovak profile has 1.0.0 only.
 */
export type TddVersion = '1.0.0' | '1.1.0';

/** A Tax Data Document profile (profiles.ts): the ViDA pilot TDD, the Slovak Republic TDD. */
export type TddProfileId = 'vida-1' | 'sk-1';

/** A participant identifier with its scheme (ICD), e.g. `{ schemeId: '0242', value: '001110-vidapilot' }`. */
export interface ParticipantId {
  schemeId: string;
  value: string;
}

/** One tax authority (C5) a report may go to: the one of the reporter's VAT country. */
export interface TddAuthority {
  /** TDT-010 Tax authority identifier, as the profile expects it (the pilot uses the ISO 3166 country code). */
  id: string;
  /** TDT-011 Tax authority name */
  name?: string;
  /** TDT-014 the C5 access point's participant id (scheme 0242, SPID based), e.g. 001111-vidapilot.tax_dk */
  receiver: string;
  /** The reporter roles this country requires reports from (the supplier side, the buyer side or both). */
  roles: readonly TddReporterRole[];
  /** The TDD profile this authority receives; absent means `vida-1` (parseTddConfig fills it in). */
  profile?: TddProfileId;
  /** The Peppol document type id and process id to send under, when not the profile's (profiles.ts). */
  documentTypeId?: string;
  processId?: string;
}

/**
 * What the specification leaves to the implementer, as configuration (docs/decisions.md "Tax Data Document").
 * Countries are ISO 3166-1 alpha-2 codes of the reporter's VAT identifier (Greece as GR).
 */
export interface TddConfig {
  version: TddVersion;
  /** TDT-015 our service provider id (SPID, scheme 0242). */
  serviceProviderId: string;
  /**
   * The Peppol document type id and process id of `vida-1` reports (configured before profiles existed, when the
   * ViDA pilot was the only profile; parseTddConfig fills in the profile's when absent). Other profiles use theirs,
   * or the authority's own (`tddTransport`).
   */
  documentTypeId: string;
  processId: string;
  authorities: Readonly<Record<string, TddAuthority>>;
}

/** One report the document needs. */
export interface PlannedTddReport {
  role: TddReporterRole;
  /** The reporter's VAT country (BT-31 for C2, BT-48 for C3, else the party's address country). */
  country: string;
  authority: TddAuthority;
  scope: TddDocumentScope;
}

/** A report the plan considered and left out, with the reason (recorded so that "not reported" is a decision). */
export interface SkippedTddReport {
  role: TddReporterRole;
  country?: string;
  reason: string;
}

export interface TddPlan {
  reports: PlannedTddReport[];
  skipped: SkippedTddReport[];
}

/** What is fresh per exchange: passed in, so that a retried step writes the same document. */
export interface TddExchange {
  reportType: TddReportType;
  /** TDT-003 the TDD's own UUID. */
  tddUuid: string;
  /** TDT-018 Invoice Transmission UUID (TDD 1.1.0): one per exchange of the invoice. */
  transmissionUuid: string;
  /** TDT-004 / TDT-005: when the TDD is issued (written as UTC). */
  issuedAt: Date;
}

/** A derived Tax Data Document: the envelope and the projection of the invoice it reports. */
export interface TaxDataDocument {
  /** The profile it is written in (namespace, TDT-001, TDT-002); absent means `vida-1`. */
  profile?: TddProfileId;
  version: TddVersion;
  /** TDT-003 */
  uuid: string;
  /** TDT-004 YYYY-MM-DD */
  issueDate: string;
  /** TDT-005 hh:mm:ss.sssZ */
  issueTime: string;
  /** TDT-007 */
  typeCode: 'S' | 'R' | 'D';
  /** TDT-006 */
  scope: TddDocumentScope;
  /** TDT-012 */
  role: TddReporterRole;
  /** TDG-04 */
  authority: { id: string; name?: string };
  /** TDT-013 the reporting taxpayer's Peppol participant id (BT-34 for C2, BT-49 for C3) */
  reportingParty: ParticipantId;
  /** TDT-014 the C5 (scheme 0242) */
  receivingParty: ParticipantId;
  /** TDT-015 our SPID (scheme 0242) */
  representative: ParticipantId;
  /** TDT-017 */
  invoiceUuid: string;
  /** TDT-018 (written from TDD 1.1.0 on) */
  transmissionUuid: string;
  /** The reported invoice (TDG-02); the renderer writes only the terms the TDD allows. */
  invoice: Invoice;
}
