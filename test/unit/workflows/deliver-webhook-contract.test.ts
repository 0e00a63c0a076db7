import { deliveryEventInput, deliverWebhookWorkflowId } from '../../../workflows/contracts/deliver-webhook';
import { invoiceReceivedEvent } from '../webhooks/hook-fixture';

const event = invoiceReceivedEvent;
const delivery = { hookId: 'h-1', deliveryId: 'd-1', eventId: 'notice-1', attempt: 2 };

describe('deliveryEventInput', () => {
  it('builds a failed attempt’s notice, carrying the original event with its party key', () => {
    const input = deliveryEventInput(
      { tenantId: 't-1', eventId: 'ev-1', event, eventPartyKey: 'p-key' },
      delivery,
      { kind: 'failed', error: 'timed out after 10000 ms', url: 'https://receiver.example/hook' },
      { topic: 'HookSentRetry', nextAttemptOn: '2026-11-26T10:00:05.000Z' },
    );
    expect(input).toEqual({
      original: { event, partyKey: 'p-key' },
      eventId: 'notice-1',
      tenantId: 't-1',
      originalEventId: 'ev-1',
      hookId: 'h-1',
      deliveryId: 'd-1',
      attempt: 2,
      error: 'timed out after 10000 ms',
      url: 'https://receiver.example/hook',
      kind: { topic: 'HookSentRetry', nextAttemptOn: '2026-11-26T10:00:05.000Z' },
    });
  });

  it('gives an answered attempt its status, and an environment-level party key (null) still carries the event', () => {
    const input = deliveryEventInput(
      { tenantId: 't-1', eventId: 'ev-1', event, eventPartyKey: null },
      delivery,
      { kind: 'sent', httpStatus: 410, url: 'https://receiver.example/hook' },
      { topic: 'HookSentError', reason: 'gone' },
    );
    expect(input).toMatchObject({ original: { event, partyKey: null }, httpStatus: 410, error: 'HTTP 410' });
  });

  it('names a delivery run after its tenant and delivery id', () => {
    expect(deliverWebhookWorkflowId('t-1', 'd-1')).toBe('webhook-delivery:t-1:d-1');
  });
});
