import type { GatewayEvent } from '../../../src/webhooks/event-payload';
import type { HookRecord } from '../../../src/storage/hooks/hook.repository';

/** An active https hook record of tenant t1 at rev 0, with `fields` over it: the webhook unit tests' starting point. */
export function hookRecord(id: string, fields: Partial<HookRecord> = {}): HookRecord {
  const now = new Date(0);
  return {
    id,
    tenantId: 't1',
    partyId: null,
    action: 'https',
    name: '',
    url: 'https://receiver.example/a',
    topic: 'Ping',
    topics: [],
    secureKey: 'key-of-enough-length-0123',
    filter: null,
    output: [],
    mlsType: null,
    isActive: true,
    timeoutMs: null,
    disabledReason: null,
    rev: 0,
    createdOn: now,
    changedOn: now,
    ...fields,
  };
}

/** A published InvoiceReceived event as a run carries it. */
export const invoiceReceivedEvent: GatewayEvent = {
  id: 'ev-1',
  topic: 'InvoiceReceived',
  partyId: 'BE:EN:0123456789',
  message: 'received',
  details: {},
  createdBy: 'peppol',
  createdOn: '2026-11-26T10:00:00+00:00',
};
