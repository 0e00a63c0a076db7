/**
 * The tax report of an invoice or credit note (digital reporting, the reportTax run's steps): which report the
 * document needs, the Tax Data Document derived from its EN 16931 model, rendered, validated with the pinned official
 * artefacts and stored once as an outbound document of the party; its submission over Peppol AS4 to the tax
 * authority's access point (C5) through the shared AS4 step, asking for an MLS; and the TaxReport* events with their
 * entries on the reported document's history (side entries: the document's state stays the delivery's).
 */
import { readFileSync } from 'node:fs';
import {
  FIRST_TAX_REPORT,
  reportTypeOf,
  taxReportKey,
  DocumentState,
  type TaxReportRef,
  type TaxReportStep,
} from '../core/document-states';
import { GatewayError, isGatewayError } from '../core/gateway-error';
import { readBytes } from '../documents/loader';
import { nameBasedUuid } from '../ids/name-uuid';
import { formatId, parseDocumentTypeId, parseProcessId, peppolParticipant } from '../peppol/identifiers';
import { ourSpid, peppolSenderOf, sendOverAs4, storeGeneratedDocument, type As4SendDeps } from '../sending/as4-send';
import type { SentDocumentEventDeps } from '../sending/sent-document-event';
import { summarizeErrors } from '../sending/check-document';
import { readInvoiceModel } from '../transform';
import type { Validator } from '../validation';
import type {
  PreparedTaxReport,
  TaxReportAttempt,
  TaxReportAttemptResult,
  TaxReportEventInput,
  TaxReportingSettings,
} from '../../workflows/contracts/report-tax';
import {
  deriveTdd,
  parseTddConfig,
  planTddReports,
  renderTdd,
  invoiceUuidOf,
  TddDerivationError,
  validateTdd,
  TDD_CUSTOMIZATION_ID,
  TDD_PROFILE_ID,
  TDD_RULE_PACKS,
  tddRulePacks,
  tddTransport,
  type TddConfig,
  type TddDirection,
  type TddReporterRole,
} from './tdd';

/** Namespace of the ids of the Tax Data Documents we send (fixed once). */
export const TAX_REPORT_NAMESPACE = '6f1d2c4e-8a3b-4f5d-9e7c-1b2a3c4d5e6f';

/** The stored TDD of a document's report: one per (document, role, report); the first keeps its original name. */
export function taxReportDocumentId(
  tenantId: string,
  documentId: string,
  role: string,
  report: TaxReportRef = FIRST_TAX_REPORT,
): string {
  const which = report.sequence > 1 ? `${reportTypeOf(report.typeCode)}-${report.sequence}` : 'submit';
  return nameBasedUuid(TAX_REPORT_NAMESPACE, [tenantId, documentId, role, which]);
}

/** How history texts name a report: "C2, DK" for the first, "2, resubmit, C2, DK" for a later one. */
function reportName(ref: TaxReportRef, role: TddReporterRole, country?: string): string {
  const later = ref.sequence > 1 ? [String(ref.sequence), reportTypeOf(ref.typeCode)] : [];
  return [...later, role, ...(country ? [country] : [])].join(', ');
}

/** Tax reporting as the worker has it: the configuration and a validator for the TDD artefacts, or why not. */
export type TaxReporting =
  | { config: TddConfig; validator: Pick<Validator, 'validateDocument'>; acknowledgementTimeoutMs: number }
  | { unavailable: string };

/** What a run that may report needs to know: whether reporting is on here, and the acknowledgement wait. */
export function taxReportingSettings(t: TaxReporting | undefined): TaxReportingSettings | undefined {
  return t && !('unavailable' in t) ? { acknowledgementTimeoutMs: t.acknowledgementTimeoutMs } : undefined;
}

/** Reads the TAX_REPORTING_CONFIG file (JSON, checked by parseTddConfig); a version without pinned rules is refused. */
export function readTaxReportingConfig(file: string): TddConfig {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`TAX_REPORTING_CONFIG ${file} cannot be read as JSON: ${(e as Error).message}`);
  }
  const config = parseTddConfig(json);
  if (!TDD_RULE_PACKS[config.version])
    throw new Error(
      `TAX_REPORTING_CONFIG ${file}: Tax Data Document ${config.version} has no pinned validation rules ` +
        '(docs/decisions.md "Tax Data Document"); configure a version whose artefacts are pinned',
    );
  return config;
}

export interface TaxReportDeps extends As4SendDeps, SentDocumentEventDeps {
  taxReporting: TaxReporting;
}

const TDD_FORMAT = {
  id: 'peppol-vida-tdd',
  name: 'Peppol ViDA pilot Tax Data Document',
  syntax: 'other',
  documentType: 'TaxData',
  customizationId: TDD_CUSTOMIZATION_ID,
  profileId: TDD_PROFILE_ID,
};

function settingsOf(deps: TaxReportDeps): Exclude<TaxReporting, { unavailable: string }> {
  const t = deps.taxReporting;
  if ('unavailable' in t)
    throw new GatewayError('DEPENDENCY_UNAVAILABLE', `tax reporting is not configured here: ${t.unavailable}`, {
      retryable: true,
    });
  return t;
}

async function historyEntry(
  deps: TaxReportDeps,
  ids: { tenantId: string; documentId: string },
  report: TaxReportRef,
  step: TaxReportStep,
  detail: string,
  attempt?: number,
): Promise<void> {
  await deps.documents.appendHistory(ids.tenantId, ids.documentId, {
    key: taxReportKey(step, attempt, report),
    state: DocumentState.TaxReport,
    detail: detail.slice(0, 1000),
  });
}

/**
 * Which report the document needs and, when one, its TDD: derived, rendered, validated and stored once (a retried
 * step finds it). Not required: `skipped`; required but impossible (terms missing, the official rules refuse it, not
 * readable as an invoice): `refused`. Each outcome is an entry on the document's history.
 */
export async function prepareTaxReport(
  deps: TaxReportDeps,
  input: { tenantId: string; documentId: string; direction: TddDirection; report?: TaxReportRef },
): Promise<PreparedTaxReport> {
  const { config, validator } = settingsOf(deps);
  const ids = { tenantId: input.tenantId, documentId: input.documentId };
  const ref = input.report ?? FIRST_TAX_REPORT;
  const reportType = reportTypeOf(ref.typeCode);
  const doc = await deps.documents.findStored(input.tenantId, input.documentId);
  if (!doc) throw new GatewayError('DOCUMENT_NOT_FOUND', `document ${input.documentId} not found`);
  const role: TddReporterRole = input.direction === 'outbound' ? 'C2' : 'C3';
  const refuse = async (reason: string, where: { country?: string; authority?: string } = {}) => {
    await historyEntry(deps, ids, ref, 'refused', `Not reported (${reportName(ref, role)}): ${reason}`);
    return { kind: 'refused' as const, ref, role, ...where, reason };
  };
  let invoice;
  try {
    invoice = readInvoiceModel(await readBytes(deps, doc.blobId)).invoice;
  } catch (e) {
    if (!isGatewayError(e) || e.retryable) throw e;
    return refuse(`the document cannot be read as an invoice: ${e.message}`);
  }
  const plan = planTddReports(invoice, input.direction, config);
  const planned = plan.reports[0];
  if (!planned) {
    const skipped = plan.skipped[0] ?? { role, reason: 'no report is required' };
    await historyEntry(
      deps,
      ids,
      ref,
      'skipped',
      `No tax report (${reportName(ref, skipped.role)}): ${skipped.reason}`,
    );
    return {
      kind: 'skipped',
      ref,
      role: skipped.role,
      ...(skipped.country ? { country: skipped.country } : {}),
      reason: skipped.reason,
    };
  }
  // The C5 participant id under scheme 0242, written with or without the scheme in the configuration.
  const where = { country: planned.country, authority: planned.authority.receiver.replace(/^0242:/, '') };
  const reportDocumentId = taxReportDocumentId(input.tenantId, input.documentId, planned.role, ref);
  let invoiceUuid: string;
  const stored = await deps.documents.findStored(input.tenantId, reportDocumentId);
  if (stored) {
    invoiceUuid = invoiceUuidOf(invoice);
  } else {
    let tdd;
    try {
      tdd = deriveTdd(
        invoice,
        planned,
        {
          reportType,
          tddUuid: reportDocumentId,
          transmissionUuid: nameBasedUuid(TAX_REPORT_NAMESPACE, [reportDocumentId, 'transmission', '1']),
          issuedAt: new Date(),
        },
        config,
      );
    } catch (e) {
      if (e instanceof TddDerivationError) return refuse(e.message, where);
      throw e;
    }
    invoiceUuid = tdd.invoiceUuid;
    const xml = renderTdd(tdd);
    const transport = tddTransport(config, planned.authority);
    const verdict = await validateTdd(validator, xml, config.version, transport.profile.id);
    if (!verdict.isValid)
      return refuse(
        `the official Tax Data Document rules refuse it: ${summarizeErrors(verdict.assertions) || 'invalid'}`,
        where,
      );
    const written = await storeGeneratedDocument(deps, {
      tenantId: input.tenantId,
      documentId: reportDocumentId,
      partyId: doc.partyId,
      bytes: Buffer.from(xml, 'utf8'),
      kind: 'tax-data-document',
      createdBy: 'tax-reporting',
      format: {
        ...TDD_FORMAT,
        id: transport.profile.formatId,
        name: transport.profile.name,
        customizationId: transport.profile.customizationId,
        documentTypeId: transport.documentTypeId,
      },
      validation: `validated (${tddRulePacks(transport.profile.id, config.version)})`,
    });
    if (!written)
      throw new GatewayError('STORAGE_FAILED', `tax report ${reportDocumentId} could not be stored`, {
        retryable: true,
      });
  }
  await historyEntry(
    deps,
    ids,
    ref,
    'built',
    `Tax Data Document ${reportDocumentId} (${reportType}, ${planned.role}, ${planned.country}) for ` +
      `${planned.authority.name ?? planned.authority.id} (0242:${where.authority}); invoice UUID ${invoiceUuid}`,
  );
  return {
    kind: 'report',
    ref,
    role: planned.role,
    ...where,
    reportDocumentId,
    invoiceUuid,
    acknowledgedBy: formatId(authoritySpid(where.authority)),
  };
}

/**
 * Who answers a report with an MLS: the authority's access point, by its service provider id. A C5 participant id is
 * SPID based (`001111-vidapilot.tax_dk`: the SPID, then a suffix), and an MLS comes from the SPID itself (MLS 1.0);
 * a receiver that is a bare SPID answers as itself.
 */
export function authoritySpid(receiver: string): ReturnType<typeof peppolParticipant> {
  const m = /^([0-9]{6})(?:-|$)/.exec(receiver);
  return peppolParticipant(`0242:${m ? m[1] : receiver}`);
}

/** One AS4 attempt of the stored TDD to the authority's access point, asking for an MLS (always). */
export async function submitTaxReportAttempt(
  deps: TaxReportDeps,
  input: TaxReportAttempt,
): Promise<TaxReportAttemptResult> {
  const { config } = settingsOf(deps);
  const sender = peppolSenderOf(deps);
  const { report } = input;
  const transport = tddTransport(config, report.country);
  const [doc, tdd] = await Promise.all([
    deps.documents.findStored(input.tenantId, input.documentId),
    deps.documents.findStored(input.tenantId, report.reportDocumentId),
  ]);
  if (!doc || !tdd)
    throw new GatewayError(
      'DOCUMENT_NOT_FOUND',
      `tax report ${report.reportDocumentId} of document ${input.documentId} is not stored`,
    );
  return sendOverAs4(deps, {
    tenantId: input.tenantId,
    documentId: report.reportDocumentId,
    partyId: doc.partyId,
    bytes: await readBytes(deps, tdd.blobId),
    // The report goes from us, the reporter's service provider (TDT-015), to the authority's access point (TDT-014).
    sender: ourSpid(sender),
    receiver: peppolParticipant(`0242:${report.authority}`),
    documentType: parseDocumentTypeId(transport.documentTypeId),
    process: parseProcessId(transport.processId),
    countryC1: report.country,
    idSeed: `${input.tenantId}:tax-report:${report.reportDocumentId}`,
    attempt: input.attempt,
    firstAttemptAt: new Date(input.firstAttemptAt),
    label: `Tax report (${report.role}, ${report.country})`,
    mlsType: 'ALWAYS_SEND',
    reportOf: input.documentId,
    ...(report.ref && report.ref.sequence > 1 ? { reportSequence: report.ref.sequence } : {}),
  });
}

const TOPIC = {
  accepted: 'TaxReportSent',
  retry: 'TaxReportRetry',
  rejected: 'TaxReportError',
  refused: 'TaxReportError',
  failed: 'TaxReportError',
} as const;

/**
 * A step of the report: its entry on the reported document's history and, except for `submitted` (the AS4 receipt is
 * not the authority's verdict), its TaxReport* event. documentId is the reported document; the TDD is in the details.
 */
export async function publishTaxReportEvent(
  deps: TaxReportDeps,
  input: TaxReportEventInput,
): Promise<{ eventId: string | null }> {
  const ids = { tenantId: input.tenantId, documentId: input.documentId };
  const { report } = input;
  const ref = report.ref ?? FIRST_TAX_REPORT;
  const reportDocumentId = report.kind === 'report' ? report.reportDocumentId : '';
  const authority = report.kind === 'skipped' ? '' : (report.authority ?? '');
  const to = input.to || (authority ? formatId(peppolParticipant(`0242:${authority}`)) : '');
  const what = `Tax report (${reportName(ref, report.role, report.country)})`;
  const text = (() => {
    switch (input.outcome) {
      case 'submitted':
        return `${what} delivered to the tax authority ${to} (AS4 MessageId ${input.messageId ?? ''}); waiting for its MLS`;
      case 'accepted':
        return `${what} accepted by the tax authority ${to}: MLS ${input.statusCode ?? ''}${input.reason ? `: ${input.reason}` : ''}`;
      case 'rejected':
        return `${what} rejected by the tax authority ${to}: MLS ${input.statusCode ?? ''}${input.reason ? `: ${input.reason}` : ''}`;
      case 'retry':
        return `${what} not delivered yet (attempt ${input.attempt ?? ''}): ${input.reason ?? ''}; next attempt ${input.nextAttemptOn ?? ''}`;
      case 'refused':
        return `${what} not made: ${input.reason ?? ''}`;
      case 'failed':
        return `${what} failed: ${input.reason ?? ''}`;
    }
  })();
  if (input.outcome !== 'refused') {
    // `refused` was recorded by the plan step that found it.
    await historyEntry(
      deps,
      ids,
      ref,
      input.outcome === 'retry' ? 'retry' : input.outcome,
      input.mlsDocumentId ? `${text} (MLS document ${input.mlsDocumentId})` : text,
      input.attempt,
    );
  }
  if (input.outcome === 'submitted') return { eventId: null };
  const doc = await deps.documents.findStored(input.tenantId, input.documentId);
  const party = doc ? await deps.directory.findParty(doc.partyId) : null;
  const { event } = await deps.events.publishEvent({
    id: input.eventId,
    tenantId: input.tenantId,
    topic: TOPIC[input.outcome],
    party:
      party && party.tenantId === input.tenantId
        ? { partyId: party.partyId, legalEntityId: party.legalEntityId }
        : null,
    documentId: input.documentId,
    message: text.slice(0, 2000),
    details: {
      id: input.documentId,
      role: report.role,
      country: report.country ?? '',
      authority: to,
      reportType: reportTypeOf(ref.typeCode),
      report: String(ref.sequence),
      reportDocumentId,
      invoiceUuid: report.kind === 'report' ? report.invoiceUuid : '',
      outcome: input.outcome,
      statusCode: input.statusCode ?? '',
      reason: input.reason ?? '',
      ...(input.attempt !== undefined ? { attempt: String(input.attempt) } : {}),
      ...(input.messageId ? { messageId: input.messageId } : {}),
      ...(input.endpoint ? { endpoint: input.endpoint } : {}),
      ...(input.nextAttemptOn ? { nextAttemptOn: input.nextAttemptOn } : {}),
      ...(input.mlsDocumentId ? { mlsDocumentId: input.mlsDocumentId } : {}),
    },
    createdBy: 'api',
  });
  return { eventId: event.id };
}

export interface TaxReportSteps {
  prepareTaxReport: (input: {
    tenantId: string;
    documentId: string;
    direction: TddDirection;
    report?: TaxReportRef;
  }) => Promise<PreparedTaxReport>;
  submitTaxReportAttempt: (input: TaxReportAttempt) => Promise<TaxReportAttemptResult>;
  publishTaxReportEvent: (input: TaxReportEventInput) => Promise<{ eventId: string | null }>;
}

export function createTaxReporting(deps: TaxReportDeps): TaxReportSteps {
  return {
    prepareTaxReport: (input) => prepareTaxReport(deps, input),
    submitTaxReportAttempt: (input) => submitTaxReportAttempt(deps, input),
    publishTaxReportEvent: (input) => publishTaxReportEvent(deps, input),
  };
}
