import { loadConfig } from '../../../src/config/load-config';

const DAY = 86_400_000;

describe('retention settings', () => {
  it('default to off, 90 days for failed invoices, ten years for documents and AS4 messages, 90 days for the rest', () => {
    const { retention } = loadConfig({});
    expect(retention).toEqual({
      enabled: false,
      intervalMs: 60 * 60_000,
      batchSize: 200,
      periodsMs: {
        failedDocument: 90 * DAY,
        document: 3653 * DAY,
        as4Message: 3653 * DAY,
        event: 90 * DAY,
        deliveryLog: 90 * DAY,
        inboxEntry: 90 * DAY,
      },
    });
  });

  it('take fractions of a day (a compressed clock) and refuse what breaks the contract or the duplicate window', () => {
    expect(loadConfig({ RETENTION_FAILED_INVOICE_DAYS: String(4 / 86_400) }).retention.periodsMs.failedDocument).toBe(
      4000,
    );
    expect(() => loadConfig({ NODE_ENV: 'production', RETENTION_FAILED_INVOICE_DAYS: '30' })).toThrow(
      /RETENTION_FAILED_INVOICE_DAYS: the contract keeps failed invoices 90 days/,
    );
    expect(() => loadConfig({ RETENTION_AS4_MESSAGE_DAYS: '1', AS4_DUPLICATE_WINDOW_HOURS: '48' })).toThrow(
      /RETENTION_AS4_MESSAGE_DAYS: shorter than AS4_DUPLICATE_WINDOW_HOURS/,
    );
    expect(() => loadConfig({ RETENTION_EVENT_DAYS: '0' })).toThrow(/RETENTION_EVENT_DAYS/);
    expect(() => loadConfig({ RETENTION_BATCH: '0' })).toThrow(/RETENTION_BATCH/);
  });
});
