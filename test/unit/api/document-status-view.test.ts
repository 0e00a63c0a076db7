import { documentStatusView } from '../../../api/routes/documents.routes';
import { describe as describeRecord, type StoredDocument } from '../../../src/storage/document.repository';
import type { DocumentHistoryDoc } from '../../../src/storage/models';

const STORED: StoredDocument = {
  _id: 't1:doc-1',
  tenantId: 't1',
  documentId: '6c0b7f5e-5a0e-4c57-9e2c-4f0f4a1f0c11',
  partyId: '0106:12345678',
  direction: 'outbound',
  createdBy: 'api',
  contentType: 'application/xml',
  size: 10,
  sha256: 'x',
  blobId: 'b1',
  createdAt: new Date('2026-11-28T10:00:00Z'),
};

const entry = (
  key: string,
  state: string,
  order: number,
  extra: Partial<DocumentHistoryDoc> = {},
): DocumentHistoryDoc => ({
  _id: `${STORED._id}#${key}`,
  docKey: STORED._id,
  key,
  state,
  order,
  at: new Date(`2026-11-28T10:00:0${order}Z`),
  ...extra,
});

describe('the status resource of a sales invoice', () => {
  const due = new Date('2026-11-28T16:00:03Z');
  const waiting = [
    entry('send-attempt-1', 'sending', 1, { channel: 'hook-erp', detail: 'attempt 1 over https: retryable' }),
    entry('retry-1', 'retrying', 2, { channel: 'hook-erp', nextAttemptOn: due }),
  ];

  it('while it waits between attempts: when the next is due, and per entry the channel tried', () => {
    const view = documentStatusView(describeRecord(STORED, waiting));
    expect(view).toMatchObject({ state: 'retrying', nextAttemptOn: '2026-11-28T16:00:03.000Z' });
    expect(view.history.slice(1)).toEqual([
      {
        state: 'sending',
        at: '2026-11-28T10:00:01.000Z',
        detail: 'attempt 1 over https: retryable',
        channel: 'hook-erp',
      },
      {
        state: 'retrying',
        at: '2026-11-28T10:00:02.000Z',
        channel: 'hook-erp',
        nextAttemptOn: '2026-11-28T16:00:03.000Z',
      },
    ]);
  });

  it('once the next attempt runs, no due time is shown (the retry entry keeps its own)', () => {
    const view = documentStatusView(
      describeRecord(STORED, [...waiting, entry('send-attempt-2', 'sending', 3, { channel: 'hook-erp' })]),
    );
    expect(view.state).toBe('sending');
    expect(view).not.toHaveProperty('nextAttemptOn');
    expect(view.history[2]).toMatchObject({ nextAttemptOn: '2026-11-28T16:00:03.000Z' });
  });
});
