import { HistoryStep, generationKey, historyOrder, taxReportKey } from '../../../src/core/document-states';
import { documentVerdict, firstCutOff } from '../../../src/maintenance/retention';
import type { RetentionPeriods } from '../../../src/config/load-config';

const DAY = 86_400_000;
const periods: RetentionPeriods = {
  failedDocument: 90 * DAY,
  document: 3653 * DAY,
  as4Message: 3653 * DAY,
  event: 90 * DAY,
  deliveryLog: 90 * DAY,
  inboxEntry: 90 * DAY,
};
const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(T0 + ms);
const entry = (key: string, state: string, ms: number) => ({ state, order: historyOrder(key, state), at: at(ms) });
const judge = (
  stored: { direction: 'outbound' | 'inbound'; createdAt: Date },
  entries: ReturnType<typeof entry>[],
  asOfMs: number,
  extra: { held?: boolean; running?: boolean } = {},
) =>
  documentVerdict(stored, entries, {
    asOf: at(asOfMs),
    periods,
    held: extra.held ?? false,
    running: extra.running ?? false,
  });

const outbound = { direction: 'outbound' as const, createdAt: at(0) };
const inbound = { direction: 'inbound' as const, createdAt: at(0) };
const failed = [
  entry(HistoryStep.accepted.key, 'accepted', 1000),
  entry(HistoryStep.detect.key, 'detected', 2000),
  entry(HistoryStep.validate.key, 'invalid', 3000),
  entry(HistoryStep.sendError.key, 'InvoiceSentError', 10 * DAY),
];
const delivered = [
  entry(HistoryStep.accepted.key, 'accepted', 1000),
  entry(HistoryStep.detect.key, 'detected', 2000),
  entry(HistoryStep.delivered.key, 'delivered', 3000),
];

describe('retention: which documents a purge may delete', () => {
  it('a failed sales invoice goes exactly 90 days after its final entry, not a millisecond earlier', () => {
    const finalAt = 10 * DAY;
    expect(judge(outbound, failed, finalAt + 90 * DAY - 1)).toEqual({ purge: false, reason: 'too-young' });
    expect(judge(outbound, failed, finalAt + 90 * DAY)).toEqual({ purge: true });
    // Counted from the final state, not the upload: 90 days after the upload it is still kept.
    expect(judge(outbound, failed, 90 * DAY + 5000)).toEqual({ purge: false, reason: 'too-young' });
  });

  it('a delivered invoice keeps the document period (ten years by default), not the 90 days', () => {
    expect(judge(outbound, delivered, 91 * DAY)).toEqual({ purge: false, reason: 'too-young' });
    expect(judge(outbound, delivered, 3000 + 3653 * DAY)).toEqual({ purge: true });
  });

  it('a later entry (a response, a tax report step) moves the period on', () => {
    const responded = [...failed, entry(taxReportKey('failed'), 'tax-report', 50 * DAY)];
    expect(judge(outbound, responded, 10 * DAY + 90 * DAY)).toEqual({ purge: false, reason: 'too-young' });
    expect(judge(outbound, responded, 50 * DAY + 90 * DAY)).toEqual({ purge: true });
  });

  it('a sent document whose life has not ended is never deleted, however old', () => {
    const waiting = [entry(HistoryStep.accepted.key, 'accepted', 1000), entry('retry-1', 'retrying', 2000)];
    expect(judge(outbound, waiting, 100 * 3653 * DAY)).toEqual({ purge: false, reason: 'not-final' });
    // Only side entries after the upload: not final either.
    expect(judge(outbound, [entry(taxReportKey('built'), 'tax-report', 10)], 100 * 3653 * DAY)).toEqual({
      purge: false,
      reason: 'not-final',
    });
  });

  it('a resent invoice is judged by its latest generation: in flight again, it is kept', () => {
    const resent = [...failed, entry(generationKey(1, HistoryStep.resend.key), 'resending', 20 * DAY)];
    expect(judge(outbound, resent, 1000 * DAY)).toEqual({ purge: false, reason: 'not-final' });
    const resentFailed = [...resent, entry(generationKey(1, HistoryStep.sendError.key), 'InvoiceSentError', 21 * DAY)];
    expect(judge(outbound, resentFailed, 21 * DAY + 90 * DAY - 1)).toEqual({ purge: false, reason: 'too-young' });
    expect(judge(outbound, resentFailed, 21 * DAY + 90 * DAY)).toEqual({ purge: true });
  });

  it('a legal hold keeps a document past every period, and an open run keeps it too', () => {
    expect(judge(outbound, failed, 1000 * DAY, { held: true })).toEqual({ purge: false, reason: 'held' });
    expect(judge(inbound, [], 5000 * DAY, { held: true })).toEqual({ purge: false, reason: 'held' });
    expect(judge(outbound, failed, 1000 * DAY, { running: true })).toEqual({ purge: false, reason: 'running' });
    expect(judge(inbound, [], 5000 * DAY, { running: true })).toEqual({ purge: false, reason: 'running' });
  });

  it('a received document keeps the document period from its last entry', () => {
    const received = [
      entry(HistoryStep.detect.key, 'detected', 1000),
      entry(HistoryStep.validate.key, 'validated', 2000),
    ];
    expect(judge(inbound, received, 2000 + 3653 * DAY - 1)).toEqual({ purge: false, reason: 'too-young' });
    expect(judge(inbound, received, 2000 + 3653 * DAY)).toEqual({ purge: true });
  });

  it('the first cut-off of documents is the shorter of the two document periods', () => {
    const asOf = at(1000 * DAY);
    expect(firstCutOff('documents', periods, asOf).getTime()).toBe(asOf.getTime() - 90 * DAY);
    expect(firstCutOff('as4-messages', periods, asOf).getTime()).toBe(asOf.getTime() - 3653 * DAY);
    expect(firstCutOff('events', { ...periods, event: 7 * DAY }, asOf).getTime()).toBe(asOf.getTime() - 7 * DAY);
  });
});
