/**
 * The monthly network reports as documents of the gateway: generated once per (month, kind) from the recorded items,
 * checked against the official rules (a report that breaks them is never stored nor sent), stored as an outbound
 * document of our service provider, and sent over AS4 to OpenPeppol through the shared AS4 step.
 */
import { DocumentState } from '../../core/document-states';
import { GatewayError } from '../../core/gateway-error';
import { readBytes } from '../../documents/loader';
import {
  documentTypeId,
  DOCTYPE_SCHEME_BUSDOX,
  peppolParticipant,
  processId,
  PROCESS_SCHEME,
  spidOfSeatId,
} from '../../peppol/identifiers';
import { sendOverAs4, storeGeneratedDocument, peppolSenderOf, type As4SendDeps } from '../../sending/as4-send';
import type { Validator } from '../../validation';
import { aggregateEusr, aggregateTsr } from './aggregate';
import { reportingMonth } from './month';
import {
  EUSR_CUSTOMIZATION_ID,
  EUSR_NAMESPACE,
  renderEusr,
  renderTsr,
  TSR_CUSTOMIZATION_ID,
  TSR_NAMESPACE,
} from './render';
import type { ReportingItemSink } from './items';
import type { PeppolReportingItem, ReportKind } from './types';
import { assertValidReport, REPORT_FORMATS, validateReport } from './validate';

/** The reports are the gateway's own documents, kept under this tenant with our SPID as their party. */
export const NETWORK_REPORTS_TENANT = 'gateway:peppol-reporting';
export const REPORT_KINDS: readonly ReportKind[] = ['tsr', 'eusr'];

export const REPORT_DOCUMENT_TYPES: Readonly<Record<ReportKind, string>> = {
  tsr: `${TSR_NAMESPACE}::TransactionStatisticsReport##${TSR_CUSTOMIZATION_ID}::1.0`,
  eusr: `${EUSR_NAMESPACE}::EndUserStatisticsReport##${EUSR_CUSTOMIZATION_ID}::1.1`,
};
export const REPORT_PROCESS = 'urn:fdc:peppol.eu:edec:bis:reporting:1.0';

export interface NetworkReportingSettings {
  /** Participant id value (iso6523-actorid-upis) of the receiver, `9925:be0848934496` in production. */
  receiver: string;
  /** Our service provider's country (COUNTRY_C1); required to send. */
  country: string | undefined;
}

export interface NetworkReportingDeps extends As4SendDeps {
  /** The official rules in process: a report is small, and the document pool's threads take detected formats only. */
  reportValidator: Pick<Validator, 'validateDocument'>;
  /** Our Seat ID (the CN of our AP certificate); else the sender's key ring's. */
  seatId?: string;
  reportingItems: ReportingItemSink & { listBetween(from: Date, to: Date): Promise<PeppolReportingItem[]> };
}

/** The reporter: our Seat ID, as configured for the reports or as our sending key ring has it. */
export function reporterSeatId(deps: NetworkReportingDeps): string {
  return deps.seatId ?? peppolSenderOf(deps).keys.seatId;
}

export const reportDocumentId = (month: string, kind: ReportKind): string => `peppol-${kind}-${month}`;

/** Renders the report of a month from the items recorded now (no storage write). */
export async function buildReport(
  deps: Pick<NetworkReportingDeps, 'reportingItems'>,
  reporterSeatId: string,
  month: string,
  kind: ReportKind,
): Promise<string> {
  const period = reportingMonth(month);
  const items = await deps.reportingItems.listBetween(period.start, period.end);
  return kind === 'tsr'
    ? renderTsr(aggregateTsr(items, period, reporterSeatId))
    : renderEusr(aggregateEusr(items, period, reporterSeatId));
}

export interface PreparedReport {
  documentId: string;
  /** False when an earlier run had generated it: that one stays the report of the month. */
  created: boolean;
  /** Whether the report was delivered (a receipt, or the receiver had it already). */
  delivered: boolean;
  /** How many send attempts its history holds. */
  attempts: number;
}

async function describe(deps: NetworkReportingDeps, documentId: string, created: boolean): Promise<PreparedReport> {
  const record = await deps.documents.find(NETWORK_REPORTS_TENANT, documentId);
  if (!record)
    throw new GatewayError('STORAGE_FAILED', `report ${documentId} could not be read back`, { retryable: true });
  return {
    documentId,
    created,
    delivered: record.history.some((h) => h.state === DocumentState.Delivered),
    attempts: record.history.filter((h) => h.key.startsWith('send-attempt-')).length,
  };
}

/**
 * The report of (month, kind), generated and stored once: a stored one is kept (a keyed insert decides between two
 * concurrent runs). A report the official rules refuse throws UNPROCESSABLE and is not stored.
 */
export async function prepareReport(
  deps: NetworkReportingDeps,
  month: string,
  kind: ReportKind,
): Promise<PreparedReport> {
  const documentId = reportDocumentId(month, kind);
  if (await deps.documents.findStored(NETWORK_REPORTS_TENANT, documentId)) return describe(deps, documentId, false);
  const seatId = reporterSeatId(deps);
  const xml = await buildReport(deps, seatId, month, kind);
  const result = await validateReport(deps.reportValidator, kind, xml);
  assertValidReport(kind, month, result);
  const format = REPORT_FORMATS[kind];
  const stored = await storeGeneratedDocument(deps, {
    tenantId: NETWORK_REPORTS_TENANT,
    documentId,
    partyId: spidOfSeatId(seatId).value,
    bytes: Buffer.from(xml, 'utf8'),
    kind: `peppol-${kind}`,
    createdBy: 'peppol-reporting',
    format: {
      id: format.id,
      name: format.name,
      syntax: format.syntax,
      documentType: format.documentType,
      documentTypeId: REPORT_DOCUMENT_TYPES[kind],
    },
    validation: result.ruleSets.map((r) => `${r.id}@${r.version}`).join(', '),
  });
  if (!stored)
    throw new GatewayError('STORAGE_FAILED', `report ${documentId} could not be recorded`, { retryable: true });
  return describe(deps, documentId, true);
}

/** One AS4 attempt of a stored report to the configured receiver, under our SPID, with our country as COUNTRY_C1. */
export async function sendReport(
  deps: NetworkReportingDeps,
  settings: NetworkReportingSettings,
  input: { month: string; kind: ReportKind; attempt: number },
) {
  if (!settings.country)
    throw new GatewayError(
      'DEPENDENCY_UNAVAILABLE',
      'PEPPOL_REPORTING_COUNTRY is not set: the reports need our service provider country as COUNTRY_C1',
      { retryable: false },
    );
  const documentId = reportDocumentId(input.month, input.kind);
  const stored = await deps.documents.findStored(NETWORK_REPORTS_TENANT, documentId);
  if (!stored)
    throw new GatewayError('DOCUMENT_NOT_FOUND', `the ${input.kind.toUpperCase()} of ${input.month} was not generated`);
  const seatId = peppolSenderOf(deps).keys.seatId;
  return sendOverAs4(deps, {
    tenantId: NETWORK_REPORTS_TENANT,
    documentId,
    partyId: stored.partyId,
    bytes: await readBytes(deps, stored.blobId),
    sender: spidOfSeatId(seatId),
    receiver: peppolParticipant(settings.receiver),
    documentType: documentTypeId(DOCTYPE_SCHEME_BUSDOX, REPORT_DOCUMENT_TYPES[input.kind]),
    process: processId(PROCESS_SCHEME, REPORT_PROCESS),
    countryC1: settings.country,
    idSeed: `${NETWORK_REPORTS_TENANT}:${documentId}`,
    attempt: input.attempt,
    firstAttemptAt: stored.createdAt,
    label: `${input.kind.toUpperCase()} ${input.month}`,
  });
}
