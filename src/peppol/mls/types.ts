/**
 * Peppol Message Level Status (MLS 1.0, eDEC): the constants, code lists and shapes shared by the builder, the reader
 * and the sending policy. An MLS is a UBL 2.1 ApplicationResponse that the receiving access point (C3) sends to the
 * sending access point (C2) about one received business document, named by its SBDH InstanceIdentifier.
 */
import { GatewayError, type GatewayErrorCode } from '../../core/gateway-error';
import type { ParticipantId } from '../identifiers';

export const MLS_CUSTOMIZATION_ID = 'urn:peppol:edec:mls:1.0';
export const MLS_PROFILE_ID = 'urn:peppol:edec:mls';
/** The ICD of the OpenPeppol Service Provider Identification Scheme (SPIS), the only EndpointID scheme of an MLS. */
export const SPIS_SCHEME_ID = '0242';
/** The LineID for an issue without a location in the business document. */
export const MLS_NO_LOCATION = 'NA';

/** AP: delivered to C4 with confirmation; AB: delivered / passed on without confirmation; RE: rejected. */
export type MlsResponseCode = 'AP' | 'AB' | 'RE';
export const MLS_RESPONSE_CODES: Readonly<Record<MlsResponseCode, string>> = Object.freeze({
  AP: 'Accepted',
  AB: 'Acknowledged',
  RE: 'Rejected',
});

/** BV fatal business rule, BW business rule warning, FD failure of delivery to C4, SV syntax violation. */
export type MlsStatusReasonCode = 'BV' | 'BW' | 'FD' | 'SV';
export const MLS_STATUS_REASON_CODES: Readonly<Record<MlsStatusReasonCode, string>> = Object.freeze({
  BV: 'Business rule violation (fatal)',
  BW: 'Business rule violation (warning)',
  FD: 'Failure of delivery',
  SV: 'Syntax violation',
});
/** The reason codes that make an issue a failure: a negative MLS needs one, a positive one may not have any. */
export const MLS_FAILURE_CODES: ReadonlySet<MlsStatusReasonCode> = new Set<MlsStatusReasonCode>(['BV', 'FD', 'SV']);

export function isMlsResponseCode(s: string): s is MlsResponseCode {
  return Object.prototype.hasOwnProperty.call(MLS_RESPONSE_CODES, s);
}

export function isMlsStatusReasonCode(s: string): s is MlsStatusReasonCode {
  return Object.prototype.hasOwnProperty.call(MLS_STATUS_REASON_CODES, s);
}

/** One issue of an MLS: where (an XPath into the business document, or `NA`), why (reason code) and what. */
export interface MlsLine {
  location: string;
  reasonCode: MlsStatusReasonCode;
  /** As written in the MLS. */
  description: string;
  /** The first bracketed rule id in the description (`[BR-CO-10] …`), when there is one. */
  ruleId?: string;
}

/** A checked MLS document. */
export interface Mls {
  id: string;
  customizationId: string;
  profileId: string;
  /** As written: `YYYY-MM-DD` and a time with zone. */
  issueDate: string;
  issueTime: string;
  /** The same instant. */
  issuedAt: Date;
  /** C3, the access point that sends the MLS (`iso6523-actorid-upis::0242:…`). */
  sender: ParticipantId;
  /** C2, the access point the MLS is for. */
  receiver: ParticipantId;
  responseCode: MlsResponseCode;
  description?: string;
  /** The SBDH InstanceIdentifier of the business document this MLS answers. */
  referencedInstanceId: string;
  lines: MlsLine[];
}

/**
 * One broken rule. `rule` is the official Schematron id (`SCH-MLS-01` … `SCH-MLS-31`) or, for what the Schematron
 * cannot see, one of ours: `MLS-XML` (not readable, safe XML), `MLS-ROOT` (not a UBL ApplicationResponse),
 * `MLS-CARDINALITY` (an element the UBL schema allows once occurs more often), `MLS-ISSUE-DATE` / `MLS-ISSUE-TIME`
 * (not a calendar date / a time of day), `MLS-LINE` (an issue without a response), `MLS-SPIS` (a party that is not a
 * participant identifier).
 */
export interface MlsProblem {
  rule: string;
  message: string;
  /** Where in the MLS, as a path of element names. */
  path: string;
}

export type MlsReadResult = { ok: true; mls: Mls } | { ok: false; problems: MlsProblem[] };

/** Input that would give an MLS that breaks a rule; `details.problems` lists every broken rule. */
export class MlsError extends GatewayError {
  readonly problems: MlsProblem[];

  constructor(problems: MlsProblem[], code: GatewayErrorCode = 'BAD_REQUEST') {
    const first = problems[0];
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    super(code, `Invalid MLS: [${first?.rule ?? ''}] ${first?.message ?? ''}${more}`, {
      details: { reason: `mls:${first?.rule ?? ''}`, problems },
    });
    this.name = 'MlsError';
    this.problems = problems;
  }
}
