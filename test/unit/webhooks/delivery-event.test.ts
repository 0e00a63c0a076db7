import type { EventRecord } from '../../../src/storage/events/event.repository';
import { deliveryEventToPublish, type DeliveryEventInput } from '../../../src/webhooks/delivery-events';
import { toGatewayEvent } from '../../../src/webhooks/event-payload';

// The events published about a delivery (HookSentRetry, HookSentError, an output rule's topic) take the original
// event from the run, which carries it: publishing one reads nothing.

const stored: EventRecord = {
  id: 'ev-1',
  tenantId: 't-1',
  topic: 'InvoiceReceived',
  partyId: 'NL:0106:12345678',
  partyKey: '0106:12345678',
  documentId: 'doc-1',
  refToDocumentId: 'doc-0',
  message: 'An invoice arrived',
  details: { sender: '0106:87654321' },
  createdBy: 'peppol',
  createdOn: new Date('2026-11-20T10:00:00Z'),
  label: 'routed',
  routes: [],
  targetHookId: null,
  excludeHookIds: [],
};

const retry = (extra: Partial<DeliveryEventInput> = {}): DeliveryEventInput => ({
  eventId: 'ev-retry',
  tenantId: 't-1',
  originalEventId: 'ev-1',
  hookId: 'hook-1',
  deliveryId: 'del-1',
  attempt: 2,
  error: 'timeout after 10 s',
  url: 'https://receiver.example/hook',
  original: { event: toGatewayEvent(stored), partyKey: stored.partyKey },
  kind: { topic: 'HookSentRetry', nextAttemptOn: '2026-11-20T10:05:00.000Z' },
  ...extra,
});

describe('deliveryEventToPublish', () => {
  it('builds HookSentRetry from the event the run carries: its party, documents and topic', () => {
    expect(deliveryEventToPublish(retry())).toEqual({
      id: 'ev-retry',
      tenantId: 't-1',
      topic: 'HookSentRetry',
      party: { partyId: '0106:12345678', legalEntityId: 'NL:0106:12345678' },
      documentId: 'doc-1',
      refToDocumentId: 'doc-0',
      createdBy: 'gateway',
      message:
        'Delivery of InvoiceReceived to hook hook-1 failed (timeout after 10 s); attempt 3 follows at ' +
        '2026-11-20T10:05:00.000Z',
      details: {
        hookId: 'hook-1',
        url: 'https://receiver.example/hook',
        attempt: '2',
        httpStatus: '',
        error: 'timeout after 10 s',
        deliveryId: 'del-1',
        originalTopic: 'InvoiceReceived',
        originalEventId: 'ev-1',
        nextAttemptOn: '2026-11-20T10:05:00.000Z',
      },
    });
  });

  it('builds HookSentError for an exhausted schedule and for 410 Gone', () => {
    const exhausted = deliveryEventToPublish(
      retry({ httpStatus: 503, error: 'HTTP 503', kind: { topic: 'HookSentError', reason: 'exhausted' } }),
    );
    expect(exhausted).toMatchObject({
      topic: 'HookSentError',
      message: 'Delivery of InvoiceReceived to hook hook-1 failed after 2 attempts (HTTP 503); no more retries',
      details: { reason: 'exhausted', httpStatus: '503', originalEventId: 'ev-1' },
    });
    const gone = deliveryEventToPublish(
      retry({ httpStatus: 410, error: 'HTTP 410', kind: { topic: 'HookSentError', reason: 'gone' } }),
    );
    expect(gone).toMatchObject({
      topic: 'HookSentError',
      message: 'Hook hook-1 answered 410 Gone to InvoiceReceived and was switched off',
      details: { reason: 'gone', httpStatus: '410' },
    });
  });

  it('keeps an environment-level event without a party and hands an output topic the original details', () => {
    const envEvent = { ...stored, partyId: '', partyKey: null };
    const published = deliveryEventToPublish(
      retry({
        original: { event: toGatewayEvent(envEvent), partyKey: null },
        httpStatus: 500,
        kind: { topic: 'output', outputTopic: 'SendInvoiceFallback' },
      }),
    );
    expect(published).toMatchObject({
      topic: 'SendInvoiceFallback',
      party: null,
      createdBy: 'peppol',
      message: 'An invoice arrived',
      details: {
        sender: '0106:87654321',
        originalTopic: 'InvoiceReceived',
        outputOfHookId: 'hook-1',
        httpStatus: '500',
      },
      excludeHookIds: ['hook-1'],
    });
  });
});
