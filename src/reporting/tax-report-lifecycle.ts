/**
 * The reports of one document, as its history records them, and which report may follow (TDT-007): a submit (S) while
 * no submit was accepted, a resubmit (R) or disregard (D) once one was, nothing after an accepted disregard. The tax
 * authority decides in the end (its MLS); this refuses only what it would certainly refuse, and one report at a time.
 */
import {
  reportTypeOf,
  taxReportEntryOf,
  TAX_REPORT_TYPE_CODES,
  type TaxReportRef,
  type TaxReportStep,
  type TaxReportType,
} from '../core/document-states';

/** The most reports one document may have (keys carry up to three digits). */
export const MAX_TAX_REPORTS = 999;

const FINAL_STEPS: ReadonlySet<TaxReportStep> = new Set(['skipped', 'refused', 'accepted', 'rejected', 'failed']);

export interface TaxReportRecord extends TaxReportRef {
  /** The step that ended it; absent while it runs. */
  outcome?: TaxReportStep;
  /** The TDD reached the authority (an AS4 receipt): a `failed` report after it has no known verdict. */
  delivered: boolean;
}

/** The document's reports in order, read from its history entries' keys. */
export function taxReportsOf(history: ReadonlyArray<{ key: string }>): TaxReportRecord[] {
  const bySequence = new Map<number, TaxReportRecord>();
  for (const { key } of history) {
    const entry = taxReportEntryOf(key);
    if (!entry) continue;
    const record = bySequence.get(entry.sequence) ?? {
      sequence: entry.sequence,
      typeCode: entry.typeCode,
      delivered: false,
    };
    if (FINAL_STEPS.has(entry.step)) record.outcome = entry.step;
    if (entry.step === 'submitted' || entry.step === 'accepted' || entry.step === 'rejected') record.delivered = true;
    bySequence.set(entry.sequence, record);
  }
  return [...bySequence.values()].sort((a, b) => a.sequence - b.sequence);
}

export type NextTaxReport = { ok: true; report: TaxReportRef } | { ok: false; reason: string };

/**
 * Whether a report of `reportType` may follow the document's reports now, and its sequence number. A report whose run
 * is still going blocks the next one; the first report is the gateway's own (started when the document is sent or
 * received), so nothing can be asked for before it ended.
 */
export function nextTaxReport(history: ReadonlyArray<{ key: string }>, reportType: TaxReportType): NextTaxReport {
  const reports = taxReportsOf(history);
  const last = reports.at(-1);
  if (!last)
    return {
      ok: false,
      reason:
        'the document has no tax report yet: the gateway reports it by itself when it is sent or received, and ' +
        'another report can be asked for once that one has ended',
    };
  if (!last.outcome) return { ok: false, reason: `its tax report ${describe(last)} is still in progress` };
  const accepted = (code: TaxReportRef['typeCode']) =>
    reports.find((r) => r.typeCode === code && r.outcome === 'accepted');
  const disregarded = accepted('D');
  if (disregarded)
    return {
      ok: false,
      reason: `its tax report was disregarded (${describe(disregarded)}); nothing follows a disregard`,
    };
  const submitted = accepted('S');
  const typeCode = TAX_REPORT_TYPE_CODES[reportType];
  if (typeCode === 'S' && submitted)
    return {
      ok: false,
      reason: `the tax authority accepted its submit (${describe(submitted)}); send a correction as a resubmit`,
    };
  // A submit the authority received but never answered (the run stopped waiting) may have been accepted.
  const maybeSubmitted = submitted ?? reports.find((r) => r.typeCode === 'S' && r.outcome === 'failed' && r.delivered);
  if (typeCode !== 'S' && !maybeSubmitted)
    return { ok: false, reason: `a ${reportType} needs a submit the tax authority accepted first` };
  if (last.sequence >= MAX_TAX_REPORTS)
    return { ok: false, reason: `the document has had ${MAX_TAX_REPORTS} tax reports, the most it may have` };
  return { ok: true, report: { sequence: last.sequence + 1, typeCode } };
}

/** "report 2 (resubmit)" and the like, for reasons. */
function describe(r: TaxReportRef): string {
  return `report ${r.sequence} (${reportTypeOf(r.typeCode)})`;
}
