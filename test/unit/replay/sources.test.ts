import type { EventRecord } from '../../../src/storage/events/event.repository';
import type { HookRecord } from '../../../src/storage/hooks/hook.repository';
import { deliveryIdFor } from '../../../src/webhooks/delivery-id';
import { checkEventSelection, EventReplaySource, InboundReplaySource } from '../../../src/replay/sources';

const AT = new Date('2026-05-01T10:00:00Z');

function event(id: string, over: Partial<EventRecord> = {}): EventRecord {
  return {
    id,
    tenantId: 't1',
    topic: 'InvoiceReceived',
    partyId: '',
    partyKey: null,
    documentId: null,
    refToDocumentId: null,
    message: '',
    details: {},
    createdBy: 'peppol',
    createdOn: AT,
    label: 'routed',
    routes: [],
    targetHookId: null,
    excludeHookIds: [],
    ...over,
  };
}

const route = (hookId: string, action = 'https', status: 'started' | 'dropped' = 'started') => ({
  hookId,
  action,
  deliveryId: deliveryIdFor('x', hookId),
  status,
});

function deps(events: EventRecord[], hooks: Partial<HookRecord>[] = []) {
  const listed: unknown[] = [];
  return {
    listed,
    deps: {
      events: {
        list: (q: { topic?: string | undefined; limit: number }) => {
          listed.push(q);
          return Promise.resolve(events.filter((e) => q.topic === undefined || e.topic === q.topic));
        },
      },
      hooks: {
        findInTenants: (tenants: readonly string[], id: string) =>
          Promise.resolve(
            (hooks.find((h) => h.id === id && tenants.includes(h.tenantId ?? '')) as HookRecord | undefined) ?? null,
          ),
      },
      publisher: { redeliver: jest.fn() },
      runs: { latestRunId: jest.fn() },
    },
  };
}

describe('event replay selection', () => {
  it('--state HookSentError: one item per (original event, hook), filtered by hook and original topic', async () => {
    const failure = (id: string, original: string, hookId: string, topic = 'InvoiceReceived') =>
      event(id, { topic: 'HookSentError', details: { originalEventId: original, hookId, originalTopic: topic } });
    const d = deps([
      failure('f1', 'e1', 'h1'),
      failure('f2', 'e1', 'h1'), // a second failure of the same delivery (after a redelivery)
      failure('f3', 'e2', 'h2'),
      failure('f4', 'e3', 'h1', 'Ping'),
    ]);
    const all = new EventReplaySource(d.deps, { tenantIds: ['t1'], window: {}, state: 'HookSentError' });
    expect((await all.select()).map((i) => i.key)).toEqual(['t1/e1/h1', 't1/e2/h2', 't1/e3/h1']);
    const hook = new EventReplaySource(d.deps, { tenantIds: ['t1'], window: {}, state: 'HookSentError', hookId: 'h1' });
    expect((await hook.select()).map((i) => i.key)).toEqual(['t1/e1/h1', 't1/e3/h1']);
    const topic = new EventReplaySource(d.deps, {
      tenantIds: ['t1'],
      window: {},
      state: 'HookSentError',
      topic: 'Invoice*',
    });
    expect((await topic.select()).map((i) => i.key)).toEqual(['t1/e1/h1', 't1/e2/h2']);
    expect((await all.select())[0]).toMatchObject({ deliveryId: deliveryIdFor('e1', 'h1') });
  });

  it('--hook / --topic: the started HTTP routes of the events', async () => {
    const d = deps([
      event('e1', { routes: [route('h1'), route('h2', 'drop', 'dropped')] }),
      event('e2', { routes: [route('h2')] }),
      event('e3', { routes: [route('h1', 'mailto')] }),
    ]);
    const byHook = new EventReplaySource(d.deps, { tenantIds: ['t1'], window: {}, hookId: 'h1' });
    expect((await byHook.select()).map((i) => i.key)).toEqual(['t1/e1/h1']);
    const byTopic = new EventReplaySource(d.deps, { tenantIds: ['t1'], window: {}, topic: 'InvoiceReceived' });
    expect((await byTopic.select()).map((i) => i.key)).toEqual(['t1/e1/h1', 't1/e2/h2']);
  });

  it('a hook must exist in the tenants given, and be delivered to; some criterion is needed', async () => {
    const d = deps(
      [],
      [
        { id: 'h1', tenantId: 't1', action: 'https' },
        { id: 'm1', tenantId: 't1', action: 'mailto' },
      ],
    );
    await expect(checkEventSelection(d.deps, { tenantIds: ['t2'], window: {}, hookId: 'h1' })).rejects.toThrow(
      'Hook h1 not found in tenant t2',
    );
    await expect(checkEventSelection(d.deps, { tenantIds: ['t1'], window: {}, hookId: 'm1' })).rejects.toThrow(
      /action mailto/,
    );
    await expect(checkEventSelection(d.deps, { tenantIds: ['t1'], window: {} })).rejects.toThrow(/needs --hook/);
    await expect(checkEventSelection(d.deps, { tenantIds: ['t1'], window: {}, topic: 'a b' })).rejects.toThrow(
      /--topic/,
    );
    expect(await checkEventSelection(d.deps, { tenantIds: ['t1', 't2'], window: {}, hookId: 'h1' })).toMatchObject({
      tenantIds: ['t1'],
    });
  });

  it('an item in doubt counts as sent only when the delivery has a run newer than the one before the claim', async () => {
    const d = deps([]);
    const source = new EventReplaySource(d.deps, { tenantIds: ['t1'], window: {}, hookId: 'h1' });
    const item = { key: 't1/e1/h1', tenantId: 't1', eventId: 'e1', hookId: 'h1', deliveryId: 'd1', view: {} };
    d.deps.runs.latestRunId.mockResolvedValue('run-1');
    expect(await source.resolveInDoubt(item, 'run-1')).toBeNull();
    d.deps.runs.latestRunId.mockResolvedValue('run-2');
    expect(await source.resolveInDoubt(item, 'run-1')).toMatchObject({ outcome: 'sent' });
    expect(await source.resolveInDoubt(item, null)).toMatchObject({ outcome: 'sent' });
    d.deps.runs.latestRunId.mockResolvedValue(undefined);
    expect(await source.resolveInDoubt(item, null)).toBeNull();
  });
});

describe('inbound replay', () => {
  it('starts the receive run of each selected message; one that has its run is reported, not started again', async () => {
    const start = jest.fn((input: { messageId: string }) =>
      Promise.resolve(input.messageId === 'm2' ? ('already-started' as const) : ('started' as const)),
    );
    const rows = ['m1', 'm2'].map((messageId) => ({
      messageId,
      tenantId: 't1',
      partyId: '0106:1',
      state: 'stored',
      receivedAt: AT,
    }));
    const source = new InboundReplaySource(
      { selection: { inboundMessages: () => Promise.resolve(rows) }, startReceiveDocument: start },
      ['t1'],
      {},
      'stored',
    );
    const items = await source.select();
    expect(items.map((i) => i.key)).toEqual(['t1/m1', 't1/m2']);
    expect(await source.act(items[0]!)).toMatchObject({ outcome: 'started' });
    expect(await source.act(items[1]!)).toMatchObject({ outcome: 'already-started' });
    expect(start).toHaveBeenCalledWith({ tenantId: 't1', messageId: 'm1' });
  });
});
