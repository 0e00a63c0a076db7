import { condition, defineSignal, setHandler, uuid4 } from '@temporalio/workflow';
import { PEPPOL_SEND_SCHEDULE } from '../src/core/retry-schedule';
import { documentSteps, validationSteps } from './activity-stubs';
import { attemptOnPeppolSchedule } from './peppol-schedule';
import { searchProgress } from './run-search';
import {
  TAX_ACKNOWLEDGEMENT_SIGNAL,
  type ReportTaxInput,
  type ReportTaxResult,
  type TaxAcknowledgement,
  type TaxReportEventInput,
} from './contracts/report-tax';

export const taxAcknowledgementSignal = defineSignal<[TaxAcknowledgement]>(TAX_ACKNOWLEDGEMENT_SIGNAL);

/**
 * The tax report of one invoice we sent (C2) or received (C3), beside its delivery: the plan step derives, renders,
 * validates and stores the Tax Data Document (or says why none is needed or possible); the TDD is submitted over AS4
 * to the tax authority's access point on the Peppol schedule (TaxReportRetry per temporary failure); then the run
 * waits for the authority's MLS (signalled by the receiving run): AP / AB end it in TaxReportSent, RE in
 * TaxReportError with the authority's reasons; no answer in time, a refused submission or the exhausted schedule end
 * it in TaxReportError too. Every step is also an entry on the reported document's history.
 */
export async function reportTax(input: ReportTaxInput): Promise<ReportTaxResult> {
  const result = await report(input);
  // How the report ended, for operators' searches: its final topic (a skipped report publishes none).
  searchProgress({
    outcome:
      result.outcome === 'skipped' ? 'skipped' : result.outcome === 'accepted' ? 'TaxReportSent' : 'TaxReportError',
  });
  return result;
}

async function report(input: ReportTaxInput): Promise<ReportTaxResult> {
  const ids = { tenantId: input.tenantId, documentId: input.documentId };
  const report = await validationSteps.prepareTaxReport({
    ...ids,
    direction: input.direction,
    ...(input.report ? { report: input.report } : {}),
  });
  const publish = (e: Omit<TaxReportEventInput, 'tenantId' | 'documentId' | 'eventId' | 'report'>) =>
    documentSteps.publishTaxReportEvent({ ...ids, eventId: uuid4(), report, ...e });
  if (report.kind === 'skipped') return { outcome: 'skipped', attempts: 0, reason: report.reason };
  if (report.kind === 'refused') {
    await publish({ outcome: 'refused', reason: report.reason });
    return { outcome: 'refused', attempts: 0, reason: report.reason };
  }
  let acknowledgement: TaxAcknowledgement | undefined;
  const expectedSender = report.acknowledgedBy.toLowerCase();
  // Temporal keeps a signal that comes before its handler (a fast authority), so setting it here loses none. Only the
  // access point the report went to may answer it; an MLS from anyone else is on the history and changes nothing here.
  setHandler(taxAcknowledgementSignal, (ack) => {
    // Participant identifiers compare case-insensitively (Peppol Policy for use of identifiers).
    if (ack.sender.toLowerCase() === expectedSender) acknowledgement ??= ack;
  });
  const run = await attemptOnPeppolSchedule(
    input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE,
    (attempt, firstAttemptAt) => documentSteps.submitTaxReportAttempt({ ...ids, report, attempt, firstAttemptAt }),
    (_sent, event, fields) =>
      // A receipt is not the authority's verdict (its MLS is): recorded, not announced.
      publish({ ...fields, outcome: event === 'sent' ? 'submitted' : event === 'retry' ? 'retry' : 'failed' }),
  );
  const base = { reportDocumentId: report.reportDocumentId, attempts: run.attempts };
  if (run.outcome !== 'sent') return { ...base, outcome: 'failed', ...(run.reason ? { reason: run.reason } : {}) };
  const answered = await condition(() => acknowledgement !== undefined, input.acknowledgementTimeoutMs);
  if (!answered || !acknowledgement) {
    const reason = `the tax authority did not acknowledge the report within ${Math.round(input.acknowledgementTimeoutMs / 60_000)} min`;
    await publish({ outcome: 'failed', reason, messageId: run.last.messageId, to: run.last.to });
    return { ...base, outcome: 'failed', reason };
  }
  const ack: TaxAcknowledgement = acknowledgement;
  const accepted = ack.responseCode === 'AP' || ack.responseCode === 'AB';
  await publish({
    outcome: accepted ? 'accepted' : 'rejected',
    statusCode: ack.responseCode,
    mlsDocumentId: ack.mlsDocumentId,
    attempt: run.attempts,
    messageId: run.last.messageId,
    to: run.last.to,
    ...(ack.reason ? { reason: ack.reason } : {}),
  });
  return {
    ...base,
    outcome: accepted ? 'accepted' : 'rejected',
    statusCode: ack.responseCode,
    ...(ack.reason ? { reason: ack.reason } : {}),
  };
}
