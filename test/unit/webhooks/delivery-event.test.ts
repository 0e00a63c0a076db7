import { createWebhookActivities, type WebhookServices } from '../../../activities/webhooks.activities';
import type { DeliveryEventInput } from '../../../src/core/webhook-delivery';
import type { EventRecord } from '../../../src/storage/events/event.repository';
import { toGatewayEvent } from '../../../src/webhooks/event-payload';
import type { PublishEventInput } from '../../../src/webhooks/publish';

// The events published about a delivery (HookSentRetry, HookSentError, an output rule's topic) take the original
// event from the run when it carries it, and read it from storage only for older runs.

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

function setup(events: EventRecord[] = [stored]) {
  const reads: string[] = [];
  const published: PublishEventInput[] = [];
  const services = {
    events: {
      get: async (tenantId: string, id: string) => {
        reads.push(id);
        return events.find((e) => e.tenantId === tenantId && e.id === id) ?? null;
      },
    },
    publisher: {
      publishEvent: async (input: PublishEventInput) => {
        published.push(input);
        return { event: { id: input.id ?? 'new', label: 'dead-letter' }, deliveries: [] };
      },
    },
  } as unknown as WebhookServices;
  return { activities: createWebhookActivities({ webhooks: services }), reads, published };
}

const retry = (extra: Partial<DeliveryEventInput> = {}): DeliveryEventInput => ({
  eventId: 'ev-retry',
  tenantId: 't-1',
  originalEventId: 'ev-1',
  hookId: 'hook-1',
  deliveryId: 'del-1',
  attempt: 2,
  error: 'timeout after 10 s',
  url: 'https://receiver.example/hook',
  kind: { topic: 'HookSentRetry', nextAttemptOn: '2026-11-20T10:05:00.000Z' },
  ...extra,
});

describe('publishDeliveryEvent', () => {
  it('publishes from the event the run carries without reading storage', async () => {
    const { activities, reads, published } = setup([]);
    await activities.publishDeliveryEvent(
      retry({ original: { event: toGatewayEvent(stored), partyKey: stored.partyKey } }),
    );
    expect(reads).toEqual([]);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      id: 'ev-retry',
      topic: 'HookSentRetry',
      party: { partyId: '0106:12345678', legalEntityId: 'NL:0106:12345678' },
      documentId: 'doc-1',
      refToDocumentId: 'doc-0',
      details: {
        originalTopic: 'InvoiceReceived',
        originalEventId: 'ev-1',
        attempt: '2',
        nextAttemptOn: '2026-11-20T10:05:00.000Z',
      },
    });
  });

  it('publishes the same event from storage for a run that carries no original', async () => {
    const carried = setup([]);
    await carried.activities.publishDeliveryEvent(
      retry({ original: { event: toGatewayEvent(stored), partyKey: stored.partyKey } }),
    );
    const read = setup();
    await read.activities.publishDeliveryEvent(retry());
    expect(read.reads).toEqual(['ev-1']);
    expect(read.published).toEqual(carried.published);
  });

  it('keeps an environment-level event without a party and hands an output topic the original details', async () => {
    const envEvent = { ...stored, partyId: '', partyKey: null };
    const { activities, published } = setup([]);
    await activities.publishDeliveryEvent(
      retry({
        original: { event: toGatewayEvent(envEvent), partyKey: null },
        httpStatus: 500,
        kind: { topic: 'output', outputTopic: 'SendInvoiceFallback' },
      }),
    );
    expect(published[0]).toMatchObject({
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

  it('fails without retry when a run carries no original and the event is gone', async () => {
    const { activities, published } = setup([]);
    await expect(activities.publishDeliveryEvent(retry())).rejects.toMatchObject({
      code: 'NOT_FOUND',
      retryable: false,
    });
    expect(published).toEqual([]);
  });
});
