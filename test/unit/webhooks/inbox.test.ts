import type { DeliveryAttemptDoc, DeliveryLogRepository } from '../../../src/storage/events/event.repository';
import type {
  InboxAckDoc,
  InboxEntryDoc,
  InboxPosition,
  InboxRepository,
} from '../../../src/storage/events/inbox.repository';
import type { HookRecord, HookRepository } from '../../../src/storage/hooks/hook.repository';
import { Dispatch } from '../../../src/webhooks/dispatch';
import type { WebhookSender } from '../../../src/webhooks/http-sender';
import { parseEntryToken } from '../../../src/webhooks/httpsin';
import { decodeInboxCursor, encodeInboxCursor, HttpsinInbox } from '../../../src/webhooks/inbox';
import { hookRecord, invoiceReceivedEvent } from './hook-fixture';

const URL_OF = (user: string, password: string) => `httpsin://${user}:${password}@inbound?token=$token$`;
const D1 = '00000000-0000-5000-8000-000000000001';
const D2 = '00000000-0000-5000-8000-000000000002';
const D3 = '00000000-0000-5000-8000-000000000003';

/** The repository's contract in memory: keyed inserts only, as FerretDB gets them. */
class MemoryInbox {
  readonly entries = new Map<string, InboxEntryDoc>();
  readonly acks = new Map<string, InboxAckDoc>();
  async put(e: InboxEntryDoc) {
    if (this.entries.has(e._id)) return 'exists' as const;
    this.entries.set(e._id, { ...e });
    return 'inserted' as const;
  }
  async get(id: string) {
    return this.entries.get(id) ?? null;
  }
  async ackOf(id: string) {
    return this.acks.get(id) ?? null;
  }
  async ack(e: Pick<InboxEntryDoc, '_id' | 'tenantId' | 'hookId'>, at: Date) {
    const existing = this.acks.get(e._id);
    if (existing) return { ack: existing, first: false };
    const ack = { _id: e._id, tenantId: e.tenantId, hookId: e.hookId, at };
    this.acks.set(e._id, ack);
    return { ack, first: true };
  }
  async listUnacknowledged(hookId: string, o: { after?: InboxPosition; limit: number; maxScanned: number }) {
    const all = [...this.entries.values()]
      .filter((e) => e.hookId === hookId)
      .sort((a, b) => a.createdOn.getTime() - b.createdOn.getTime() || a._id.localeCompare(b._id))
      .filter(
        (e) =>
          !o.after ||
          e.createdOn > o.after.createdOn ||
          (e.createdOn.getTime() === o.after.createdOn.getTime() && e._id > o.after.id),
      )
      .slice(0, o.maxScanned);
    const items: InboxEntryDoc[] = [];
    for (const e of all) {
      if (this.acks.has(e._id)) continue;
      items.push(e);
      if (items.length === o.limit) return { items, scannedTo: { createdOn: e.createdOn, id: e._id } };
    }
    return { items, scannedTo: null };
  }
}

function setup(hooks: HookRecord[]) {
  const memory = new MemoryInbox();
  let ms = Date.parse('2026-11-28T10:00:00Z');
  const now = () => new Date((ms += 1000));
  const hookRepo = {
    findForCredentials: async (id: string) => hooks.find((h) => h.id === id) ?? null,
    get: async (scope: { tenantId: string }, id: string) =>
      hooks.find((h) => h.id === id && h.tenantId === scope.tenantId) ?? null,
  } as unknown as HookRepository;
  const inbox = new HttpsinInbox({ inbox: memory as unknown as InboxRepository, hooks: hookRepo, now });
  const log: DeliveryAttemptDoc[] = [];
  const sent: unknown[] = [];
  const dispatch = new Dispatch({
    hooks: hookRepo,
    deliveryLog: { record: async (l: DeliveryAttemptDoc) => void log.push(l) } as unknown as DeliveryLogRepository,
    sender: { send: async (r: unknown) => void sent.push(r) } as unknown as WebhookSender,
    maxTimeoutMs: 10_000,
    inbox,
    now,
  });
  const attempt = (hookId: string, deliveryId: string, attemptNo = 1, event = invoiceReceivedEvent) =>
    dispatch.dispatch({
      tenantId: 't1',
      eventId: event.id,
      hookId,
      deliveryId,
      attempt: attemptNo,
      runKey: 'run-1',
      event,
    });
  return { memory, inbox, dispatch, attempt, log, sent };
}

describe('httpsin inbox', () => {
  const inboxHook = hookRecord('in-1', { action: 'httpsin', url: URL_OF('inbox-user', 's3cret'), secureKey: null });
  const otherHook = hookRecord('in-2', { action: 'httpsin', url: URL_OF('inbox-user', 's3cret'), secureKey: null });
  const foreignHook = hookRecord('in-3', {
    tenantId: 't2',
    action: 'httpsin',
    url: URL_OF('inbox-user', 's3cret'),
  });
  const httpsHook = hookRecord('web-1');

  it('delivers by putting the event in the inbox once: a keyed insert, logged, nothing sent', async () => {
    const t = setup([inboxHook]);
    await expect(t.attempt('in-1', D1)).resolves.toMatchObject({ kind: 'sent', ok: true, httpStatus: 201 });
    // A retried attempt (or a redelivery) finds its entry: nothing added, the same secret kept.
    const first = t.memory.entries.get(D1)!;
    await expect(t.attempt('in-1', D1, 2)).resolves.toMatchObject({ kind: 'sent', ok: true, httpStatus: 200 });
    expect(t.memory.entries.size).toBe(1);
    expect(t.memory.entries.get(D1)!.secret).toBe(first.secret);
    expect(first).toMatchObject({ tenantId: 't1', hookId: 'in-1', eventId: invoiceReceivedEvent.id });
    expect(t.sent).toHaveLength(0);
    expect(t.log.map((l) => [l.attempt, l.outcome, l.httpStatus, l.url])).toEqual([
      [1, 'delivered', null, 'httpsin://inbound?token=***'],
      [2, 'delivered', null, 'httpsin://inbound?token=***'],
    ]);
    expect(JSON.stringify(t.log)).not.toContain('s3cret');
  });

  it('puts nothing in for a switched-off or deleted hook, and fails (to retry) when no inbox is wired', async () => {
    const off = setup([{ ...inboxHook, isActive: false }]);
    await expect(off.attempt('in-1', D1)).resolves.toMatchObject({ kind: 'skipped', reason: 'hook-inactive' });
    const gone = setup([]);
    await expect(gone.attempt('in-1', D1)).resolves.toMatchObject({ kind: 'skipped', reason: 'hook-deleted' });
    expect(off.memory.entries.size + gone.memory.entries.size).toBe(0);

    const log: DeliveryAttemptDoc[] = [];
    const unwired = new Dispatch({
      hooks: { get: async () => inboxHook } as unknown as HookRepository,
      deliveryLog: { record: async (l: DeliveryAttemptDoc) => void log.push(l) } as unknown as DeliveryLogRepository,
      sender: {} as WebhookSender,
      maxTimeoutMs: 1000,
    });
    const r = await unwired.dispatch({
      tenantId: 't1',
      eventId: 'e',
      hookId: 'in-1',
      deliveryId: D1,
      attempt: 1,
      runKey: 'r',
      event: invoiceReceivedEvent,
    });
    expect(r).toMatchObject({ kind: 'failed' });
    expect(log[0]).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/not wired/) });
  });

  it('opens an inbox only with its own hook URL credentials', async () => {
    const t = setup([inboxHook, foreignHook, httpsHook]);
    await expect(t.inbox.authenticate('in-1', 'inbox-user', 's3cret')).resolves.toMatchObject({ id: 'in-1' });
    await expect(t.inbox.authenticate('in-1', 'inbox-user', 'wrong')).resolves.toBeNull();
    await expect(t.inbox.authenticate('in-1', 'other', 's3cret')).resolves.toBeNull();
    await expect(t.inbox.authenticate('missing', 'inbox-user', 's3cret')).resolves.toBeNull();
    // An https hook has no inbox, whatever its URL's userinfo.
    await expect(t.inbox.authenticate('web-1', '', '')).resolves.toBeNull();
    // A switched-off hook's inbox stays readable: what is in it is not lost.
    const off = setup([{ ...inboxHook, isActive: false }]);
    await expect(off.inbox.authenticate('in-1', 'inbox-user', 's3cret')).resolves.toMatchObject({ id: 'in-1' });
  });

  it('lists unacknowledged entries oldest first with the event payload, pages with a cursor, and acknowledges', async () => {
    const t = setup([inboxHook]);
    const ev = (id: string, documentId?: string) => ({ ...invoiceReceivedEvent, id, documentId: documentId ?? null });
    await t.attempt('in-1', D1, 1, ev('ev-a', 'doc-a'));
    await t.attempt('in-1', D2, 1, ev('ev-b'));
    await t.attempt('in-1', D3, 1, ev('ev-c', 'doc-c'));

    const page1 = await t.inbox.list(inboxHook, { limit: 2 });
    expect(page1.items.map((i) => i.eventId)).toEqual(['ev-a', 'ev-b']);
    expect(page1.nextCursor).not.toBeNull();
    const a = page1.items[0]!;
    expect(a.event).toEqual({
      topic: 'InvoiceReceived',
      partyId: invoiceReceivedEvent.partyId,
      hookId: 'in-1',
      documentId: 'doc-a',
      message: 'received',
      details: {},
      createdBy: 'peppol',
      createdOn: invoiceReceivedEvent.createdOn,
      sentOn: a.addedOn,
    });
    expect(parseEntryToken(a.token)).toMatchObject({ entryId: D1 });
    expect(a.links).toEqual({
      self: `/api/v1/inbox/in-1/${a.token}`,
      document: `/api/v1/inbox/in-1/${a.token}/document`,
      ack: `/api/v1/inbox/in-1/${a.token}/ack`,
    });
    expect(page1.items[1]!.links.document).toBeNull();
    const page2 = await t.inbox.list(inboxHook, { limit: 2, cursor: page1.nextCursor! });
    expect(page2).toMatchObject({ items: [{ eventId: 'ev-c' }], nextCursor: null });

    const acked = await t.inbox.ack(inboxHook, a.token);
    expect(acked.first).toBe(true);
    expect(acked.item.acknowledgedOn).not.toBeNull();
    const again = await t.inbox.ack(inboxHook, a.token);
    expect(again).toMatchObject({ first: false, item: { acknowledgedOn: acked.item.acknowledgedOn } });
    expect(t.memory.acks.size).toBe(1);
    // Gone from the listing, still readable by its token.
    expect((await t.inbox.list(inboxHook, { limit: 10 })).items.map((i) => i.eventId)).toEqual(['ev-b', 'ev-c']);
    await expect(t.inbox.entry(inboxHook, a.token)).resolves.toMatchObject({
      item: { acknowledgedOn: acked.item.acknowledgedOn },
    });
  });

  it('answers a token of another hook or tenant, a forged secret or a malformed token with the same 404', async () => {
    const t = setup([inboxHook, otherHook, foreignHook]);
    await t.attempt('in-1', D1);
    const token = (await t.inbox.list(inboxHook, { limit: 1 })).items[0]!.token;
    const forged = `${D1}.${'A'.repeat(43)}`;
    for (const [hook, tok] of [
      [otherHook, token],
      [foreignHook, token],
      [inboxHook, forged],
      [inboxHook, 'not-a-token'],
      [inboxHook, `${D2}.${token.split('.')[1]}`],
    ] as const) {
      await expect(t.inbox.entry(hook, tok)).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
      await expect(t.inbox.ack(hook, tok)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
    expect(t.memory.acks.size).toBe(0);
    expect((await t.inbox.list(otherHook, { limit: 10 })).items).toEqual([]);
  });

  it('reads back only cursors it wrote', () => {
    const p = { createdOn: new Date('2026-11-28T10:00:00Z'), id: D1 };
    expect(decodeInboxCursor(encodeInboxCursor(p))).toEqual(p);
    for (const bad of ['', 'x', Buffer.from('{"t":"1","i":"x"}').toString('base64url'), 'A'.repeat(500)])
      expect(() => decodeInboxCursor(bad)).toThrow(/cursor/);
  });
});
