/**
 * Which tax report of a document may follow which, read from its history keys: the first report (the gateway's own
 * submit) keeps its keys, later ones carry their number and type code; a submit while none was accepted, a resubmit
 * or disregard once one was (or may have been: delivered, never answered), nothing after an accepted disregard, and
 * never while a report runs.
 */
import { parseTaxReportType, reportTypeOf, taxReportEntryOf, taxReportKey } from '../../../src/core/document-states';
import { nextTaxReport, taxReportsOf, MAX_TAX_REPORTS } from '../../../src/reporting/tax-report-lifecycle';

const S1 = { sequence: 1, typeCode: 'S' } as const;
const entries = (...keys: string[]) => keys.map((key) => ({ key }));
const first = (...steps: Array<Parameters<typeof taxReportKey>[0]>) => steps.map((s) => taxReportKey(s, 1, S1));
const later = (sequence: number, typeCode: 'S' | 'R' | 'D', ...steps: Array<Parameters<typeof taxReportKey>[0]>) =>
  steps.map((s) => taxReportKey(s, 2, { sequence, typeCode }));

describe('tax report keys', () => {
  it('the first report keeps the keys it always had; later ones carry number and type code', () => {
    expect(taxReportKey('built')).toBe('tax-report:built');
    expect(taxReportKey('built', undefined, S1)).toBe('tax-report:built');
    expect(taxReportKey('retry', 3, S1)).toBe('tax-report:retry-3');
    expect(taxReportKey('accepted', undefined, { sequence: 2, typeCode: 'R' })).toBe('tax-report:2-R:accepted');
    expect(taxReportKey('retry', 4, { sequence: 12, typeCode: 'D' })).toBe('tax-report:12-D:retry-4');
  });

  it('reads every key it writes back, and nothing else', () => {
    expect(taxReportEntryOf('tax-report:submitted')).toEqual({ sequence: 1, typeCode: 'S', step: 'submitted' });
    expect(taxReportEntryOf('tax-report:2-R:retry-7')).toEqual({ sequence: 2, typeCode: 'R', step: 'retry' });
    expect(taxReportEntryOf('tax-report:999-D:failed')).toEqual({ sequence: 999, typeCode: 'D', step: 'failed' });
    expect(taxReportEntryOf('tax-report:3-S:accepted')?.step).toBe('accepted');
    for (const bad of [
      'tax-report:1-S:built', // the first report has no prefix: one key per step
      'tax-report:0-S:built',
      'tax-report:1000-R:built',
      'tax-report:2-X:built',
      'tax-report:2-R:unknown',
      'tax-report:2-R',
      'send-attempt-1',
      'g1:tax-report:built',
    ])
      expect(taxReportEntryOf(bad)).toBeUndefined();
    expect(reportTypeOf('S')).toBe('submit');
    expect(reportTypeOf('R')).toBe('resubmit');
    expect(reportTypeOf('D')).toBe('disregard');
    expect(['submit', 'resubmit', 'disregard', 'R', 'toString', '', 1, undefined].map(parseTaxReportType)).toEqual([
      'submit',
      'resubmit',
      'disregard',
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('which report may follow', () => {
  it('nothing before the first report, nor while a report runs', () => {
    const none = nextTaxReport(entries('accepted', 'validate', 'send-attempt-1'), 'resubmit');
    expect(none).toEqual({ ok: false, reason: expect.stringContaining('has no tax report yet') });
    for (const running of [
      first('built'),
      first('built', 'submitted', 'retry'),
      [...first('built', 'accepted'), ...later(2, 'R', 'built')],
    ])
      expect(nextTaxReport(entries(...running), 'disregard')).toEqual({
        ok: false,
        reason: expect.stringContaining('still in progress'),
      });
  });

  it('after an accepted submit: resubmit or disregard, not another submit', () => {
    const history = entries(...first('built', 'submitted', 'accepted'));
    expect(nextTaxReport(history, 'resubmit')).toEqual({ ok: true, report: { sequence: 2, typeCode: 'R' } });
    expect(nextTaxReport(history, 'disregard')).toEqual({ ok: true, report: { sequence: 2, typeCode: 'D' } });
    expect(nextTaxReport(history, 'submit')).toEqual({
      ok: false,
      reason: expect.stringContaining('accepted its submit (report 1 (submit)); send a correction as a resubmit'),
    });
  });

  it('after a submit that was not accepted: only a submit again', () => {
    for (const ended of [
      first('built', 'submitted', 'rejected'),
      first('refused'),
      first('skipped'),
      first('built', 'retry', 'failed'), // never delivered
    ]) {
      const history = entries(...ended);
      expect(nextTaxReport(history, 'submit')).toEqual({ ok: true, report: { sequence: 2, typeCode: 'S' } });
      expect(nextTaxReport(history, 'resubmit')).toEqual({
        ok: false,
        reason: 'a resubmit needs a submit the tax authority accepted first',
      });
    }
  });

  it('a submit delivered but never answered may have been accepted: any report may follow', () => {
    const history = entries(...first('built', 'submitted', 'failed'));
    for (const type of ['submit', 'resubmit', 'disregard'] as const)
      expect(nextTaxReport(history, type)).toMatchObject({ ok: true, report: { sequence: 2 } });
  });

  it('a later accepted submit opens corrections; an accepted disregard ends the lifecycle', () => {
    const resubmittable = entries(
      ...first('built', 'submitted', 'rejected'),
      ...later(2, 'S', 'built', 'submitted', 'accepted'),
      ...later(3, 'R', 'built', 'submitted', 'rejected'),
    );
    expect(nextTaxReport(resubmittable, 'resubmit')).toEqual({ ok: true, report: { sequence: 4, typeCode: 'R' } });
    const disregarded = entries(...resubmittable.map((e) => e.key), ...later(4, 'D', 'built', 'submitted', 'accepted'));
    expect(taxReportsOf(disregarded).map((r) => [r.sequence, r.typeCode, r.outcome])).toEqual([
      [1, 'S', 'rejected'],
      [2, 'S', 'accepted'],
      [3, 'R', 'rejected'],
      [4, 'D', 'accepted'],
    ]);
    for (const type of ['submit', 'resubmit', 'disregard'] as const)
      expect(nextTaxReport(disregarded, type)).toEqual({
        ok: false,
        reason: 'its tax report was disregarded (report 4 (disregard)); nothing follows a disregard',
      });
    // A disregard the authority refused changes nothing.
    const refusedDisregard = entries(
      ...resubmittable.map((e) => e.key),
      ...later(4, 'D', 'built', 'submitted', 'rejected'),
    );
    expect(nextTaxReport(refusedDisregard, 'disregard')).toEqual({ ok: true, report: { sequence: 5, typeCode: 'D' } });
  });

  it('stops at the most reports a document may have', () => {
    const history = entries(
      ...first('built', 'submitted', 'accepted'),
      ...later(MAX_TAX_REPORTS, 'R', 'built', 'rejected'),
    );
    expect(nextTaxReport(history, 'resubmit')).toEqual({
      ok: false,
      reason: `the document has had ${MAX_TAX_REPORTS} tax reports, the most it may have`,
    });
  });
});
