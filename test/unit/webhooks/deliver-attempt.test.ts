import type {
  DeliveryAttemptDoc,
  DeliveryLogRepository,
  EventRepository,
} from '../../../src/storage/events/event.repository';
import type { HookRecord, HookRepository } from '../../../src/storage/hooks/hook.repository';
import { HookConcurrency } from '../../../src/webhooks/concurrency';
import { DeliveryAttempts, logLineId, type AttemptInput } from '../../../src/webhooks/deliver-attempt';
import { ParkedDeliveries } from '../../../src/webhooks/parked-deliveries';
import type { GatewayEvent } from '../../../src/webhooks/event-payload';
import type { SendRequest, WebhookSender } from '../../../src/webhooks/http-sender';
import { RecentHooks } from '../../../src/webhooks/recent-hooks';
import { hookRecord } from './hook-fixture';

/*
 * Which copy of the hook an attempt sends with. The "database" here changes the way another process would (no change
 * notice): a first attempt may reuse a copy read < 2 s ago only when routing saw no newer rev; a retry always reads.
 */

const event: GatewayEvent = {
  id: 'evt-1',
  topic: 'Ping',
  partyId: '',
  documentId: null,
  refToDocumentId: null,
  message: 'Ping',
  details: {},
  createdBy: 'api',
  createdOn: '2026-11-25T04:00:00.000Z',
};

function setup(options: { parked?: ParkedDeliveries } = {}) {
  let hook: HookRecord = hookRecord('h1', {
    url: 'https://receiver.example/old',
    secureKey: 'a-secure-key-of-enough-length',
  });
  let reads = 0;
  const read = async (tenantIds: readonly string[], id: string) => {
    reads += 1;
    return id === hook.id && tenantIds.includes(hook.tenantId) ? { ...hook } : null;
  };
  const hooks = {
    findInTenants: read,
    get: (scope: { tenantId: string }, id: string) => read([scope.tenantId], id),
  } as unknown as HookRepository;
  const sent: SendRequest[] = [];
  const answers: Array<'timeout' | 'reset' | number> = [];
  const sender = {
    async send(req: SendRequest) {
      sent.push(req);
      const a = answers.shift() ?? 204;
      if (a === 'timeout')
        return { kind: 'error' as const, error: 'timed out after 10000 ms', timedOut: true, latencyMs: 10_000 };
      if (a === 'reset') return { kind: 'error' as const, error: 'socket hang up', timedOut: false, latencyMs: 1 };
      return { kind: 'response' as const, status: a, retryAfter: undefined, latencyMs: 1 };
    },
  } as unknown as WebhookSender;
  const lines: DeliveryAttemptDoc[] = [];
  const deliveryLog = {
    record: async (l: DeliveryAttemptDoc) => void lines.push(l),
  } as unknown as DeliveryLogRepository;
  const clock = { ms: 1_000_000 };
  const recentHooks = new RecentHooks(hooks, 2_000, () => clock.ms);
  const concurrency = new HookConcurrency(5, () => clock.ms);
  const attempts = new DeliveryAttempts({
    events: {} as EventRepository,
    hooks,
    deliveryLog,
    sender,
    concurrency,
    maxTimeoutMs: 10_000,
    recentHooks,
    ...(options.parked ? { parked: options.parked } : {}),
  });
  const input = (attempt: number, hookRev?: number): AttemptInput => ({
    tenantId: 't1',
    eventId: event.id,
    hookId: 'h1',
    deliveryId: `d-${attempt}-${hookRev ?? 'none'}-${sent.length}`,
    attempt,
    runKey: 'run',
    event,
    ...(hookRev !== undefined ? { hookRev } : {}),
  });
  return {
    attempts,
    concurrency,
    answers,
    input,
    sent,
    lines,
    clock,
    reads: () => reads,
    change(fields: Partial<HookRecord>) {
      hook = { ...hook, ...fields, rev: hook.rev + 1 };
    },
    close: () => recentHooks.close(),
  };
}

describe('DeliveryAttempts: delivery-log lines', () => {
  it('keys a line by delivery, run and attempt, so deliveries sharing a run keep their own lines', async () => {
    const t = setup();
    await t.attempts.attempt(t.input(1, 0));
    await t.attempts.attempt(t.input(1, 0));
    const [a, b] = t.lines;
    expect(a?.deliveryId).not.toBe(b?.deliveryId);
    expect(a?._id).toBe(`${a?.deliveryId}:run:1`);
    expect(new Set(t.lines.map((l) => l._id)).size).toBe(2);
    // A retried activity (same delivery, run and attempt) meets its own line; the next attempt gets a new one.
    const again = t.input(1, 0);
    await t.attempts.attempt(again);
    await t.attempts.attempt(again);
    expect(t.lines[2]?._id).toBe(t.lines[3]?._id);
    expect(logLineId({ ...again, attempt: 2 })).not.toBe(t.lines[3]?._id);
    t.close();
  });
});

describe('DeliveryAttempts: the hook an attempt uses', () => {
  it('reuses a hook read < 2 s ago for first attempts routed with that rev, and logs every attempt', async () => {
    const t = setup();
    for (let i = 0; i < 3; i++)
      await expect(t.attempts.attempt(t.input(1, 0))).resolves.toMatchObject({ kind: 'sent', ok: true });
    expect(t.reads()).toBe(1);
    expect(t.lines).toHaveLength(3);
    t.clock.ms += 2_000;
    await t.attempts.attempt(t.input(1, 0));
    expect(t.reads()).toBe(2);
    t.close();
  });

  it('sends with the changed URL when the event was routed after the change, and on every retry', async () => {
    const t = setup();
    await t.attempts.attempt(t.input(1, 0));
    t.change({ url: 'https://receiver.example/new' });
    // Published after the change: routing saw rev 1.
    await t.attempts.attempt(t.input(1, 1));
    expect(t.sent.at(-1)?.url).toBe('https://receiver.example/new');
    t.change({ url: 'https://receiver.example/fixed' });
    // A retry reads the hook whatever the cache holds.
    await t.attempts.attempt(t.input(2));
    expect(t.sent.at(-1)?.url).toBe('https://receiver.example/fixed');
    // Without a rev (a run started before the field existed) the attempt reads too.
    t.change({ isActive: false });
    await expect(t.attempts.attempt(t.input(1))).resolves.toMatchObject({ kind: 'skipped', reason: 'hook-inactive' });
    t.close();
  });

  it('may use the copy for at most 2 s after a change made in another process once the event was routed', async () => {
    const t = setup();
    await t.attempts.attempt(t.input(1, 0));
    t.change({ url: 'https://receiver.example/new' });
    await t.attempts.attempt(t.input(1, 0));
    expect(t.sent.at(-1)?.url).toBe('https://receiver.example/old');
    t.clock.ms += 2_000;
    await t.attempts.attempt(t.input(1, 0));
    expect(t.sent.at(-1)?.url).toBe('https://receiver.example/new');
    t.close();
  });
});

describe('DeliveryAttempts: what an attempt tells the per-hook cap', () => {
  it('narrows the cap on a timeout, widens it on any answer (a 500 too), and leaves it on a reset', async () => {
    const t = setup();
    t.answers.push('timeout', 'timeout', 'reset', 500, 204);
    await expect(t.attempts.attempt(t.input(1, 0))).resolves.toMatchObject({ kind: 'failed', timedOut: true });
    expect(t.concurrency.capOf('h1')).toBe(2);
    await t.attempts.attempt(t.input(2));
    expect(t.concurrency.capOf('h1')).toBe(1);
    await expect(t.attempts.attempt(t.input(3))).resolves.toMatchObject({ kind: 'failed', timedOut: false });
    expect(t.concurrency.capOf('h1')).toBe(1);
    await expect(t.attempts.attempt(t.input(4))).resolves.toMatchObject({ kind: 'sent', ok: false, httpStatus: 500 });
    expect(t.concurrency.capOf('h1')).toBe(2);
    await expect(t.attempts.attempt(t.input(5))).resolves.toMatchObject({ kind: 'sent', ok: true });
    expect(t.concurrency.capOf('h1')).toBe(3);
    t.close();
  });
});

describe('DeliveryAttempts: deliveries parked on a stuck hook', () => {
  /** Narrows h1 to one slot by timeouts, holds that slot, and lets 6 s pass without an answer: the hook is stuck. */
  function stick(t: ReturnType<typeof setup>): () => void {
    for (let i = 0; i < 3; i++) t.concurrency.recordOutcome('h1', true);
    const release = t.concurrency.tryAcquire('h1');
    if (!release) throw new Error('no slot');
    t.clock.ms += 6_000;
    expect(t.concurrency.isStuck('h1')).toBe(true);
    return release;
  }

  /** A stuck h1 with `ids` parked on it, then its slot freed; `woken` records the runs signalled. */
  async function parkedOn(ids: string[]) {
    const woken: string[] = [];
    const parked = new ParkedDeliveries(async (id) => void woken.push(id));
    const t = setup({ parked });
    const release = stick(t);
    for (const id of ids) await t.attempts.attempt({ ...t.input(1), workflowId: id });
    release();
    return { t, parked, woken };
  }

  it("parks a throttled try on a stuck hook for minutes, and the hook's next answer wakes exactly the parked runs", async () => {
    const woken: Array<[string, number]> = [];
    const parked = new ParkedDeliveries(async (id, within) => void woken.push([id, within]));
    const t = setup({ parked });
    const release = stick(t);
    const a = await t.attempts.attempt({ ...t.input(1), workflowId: 'wf-a' });
    const b = await t.attempts.attempt({ ...t.input(1), workflowId: 'wf-b' });
    for (const r of [a, b]) expect(r).toMatchObject({ kind: 'throttled', parked: true, retryInMs: 15 * 60_000 });
    expect(parked.count('h1')).toBe(2);
    // Without a workflow id (an older run) a try cannot be woken: it keeps the shorter timer.
    await expect(t.attempts.attempt(t.input(1))).resolves.toEqual({ kind: 'throttled', retryInMs: 30_000 });
    expect(t.sent).toHaveLength(0);

    // wf-b comes back on its own timer and gets the freed slot: it is no longer parked; its answer wakes wf-a only.
    release();
    await expect(t.attempts.attempt({ ...t.input(1), workflowId: 'wf-b' })).resolves.toMatchObject({
      kind: 'sent',
      ok: true,
    });
    await Promise.resolve();
    expect(woken).toEqual([['wf-a', 25]]);
    expect(parked.count('h1')).toBe(0);
    t.close();
  });

  it('wakes all on an error status too (the receiver is back), the last parked on a timeout, none on a reset', async () => {
    const { t, parked, woken } = await parkedOn(['wf-a', 'wf-b', 'wf-c']);
    t.answers.push('timeout', 'reset', 503);
    // The timeout frees the slot: the delivery parked last (a ping sent after a fix, say) is sent to try it.
    await expect(t.attempts.attempt({ ...t.input(2), workflowId: 'wf-x' })).resolves.toMatchObject({
      kind: 'failed',
      timedOut: true,
    });
    await Promise.resolve();
    expect(woken).toEqual(['wf-c']);
    await expect(t.attempts.attempt({ ...t.input(3), workflowId: 'wf-x' })).resolves.toMatchObject({
      kind: 'failed',
      timedOut: false,
    });
    await Promise.resolve();
    expect(woken).toEqual(['wf-c']);
    await expect(t.attempts.attempt({ ...t.input(4), workflowId: 'wf-x' })).resolves.toMatchObject({
      kind: 'sent',
      httpStatus: 503,
    });
    await Promise.resolve();
    expect(woken.sort()).toEqual(['wf-a', 'wf-b', 'wf-c']);
    expect(parked.count('h1')).toBe(0);
    t.close();
  });

  it('releases what is held for a hook on its answer though nothing parked here (held through another worker, or before a restart)', async () => {
    const released: string[] = [];
    const held = new Set(['h1']);
    const parked = new ParkedDeliveries(async () => undefined, {
      heldFor: (h) => held.has(h),
      releaseHeld: async (h) => (released.push(h), 0),
    });
    const t = setup({ parked });
    t.answers.push('timeout', 204, 204);
    // A timeout has nobody parked here to hand its slot to.
    await expect(t.attempts.attempt({ ...t.input(1), workflowId: 'wf-x' })).resolves.toMatchObject({
      kind: 'failed',
      timedOut: true,
    });
    await Promise.resolve();
    expect(released).toEqual([]);
    await expect(t.attempts.attempt({ ...t.input(2), workflowId: 'wf-x' })).resolves.toMatchObject({
      kind: 'sent',
      ok: true,
    });
    await Promise.resolve();
    expect(released).toEqual(['h1']);
    // Nothing known to be held: an answer costs no look.
    held.clear();
    await expect(t.attempts.attempt({ ...t.input(3), workflowId: 'wf-x' })).resolves.toMatchObject({
      kind: 'sent',
      ok: true,
    });
    await Promise.resolve();
    expect(released).toEqual(['h1']);
    t.close();
  });

  it('wakes every parked delivery when the hook turns out switched off, so they end instead of waiting', async () => {
    const { t, woken } = await parkedOn(['wf-a', 'wf-b']);
    t.change({ isActive: false });
    await expect(t.attempts.attempt({ ...t.input(2), workflowId: 'wf-x' })).resolves.toMatchObject({
      kind: 'skipped',
      reason: 'hook-inactive',
    });
    await Promise.resolve();
    expect(woken.sort()).toEqual(['wf-a', 'wf-b']);
    t.close();
  });

  it('waits longer the longer the hook has been stuck, up to an hour', async () => {
    const parked = new ParkedDeliveries(async () => undefined);
    const t = setup({ parked });
    stick(t);
    await expect(t.attempts.attempt({ ...t.input(1), workflowId: 'wf-a' })).resolves.toMatchObject({
      retryInMs: 15 * 60_000,
    });
    t.clock.ms += 20 * 60_000;
    await expect(t.attempts.attempt({ ...t.input(1), workflowId: 'wf-a' })).resolves.toMatchObject({
      retryInMs: 20 * 60_000 + 6_000,
    });
    t.clock.ms += 3 * 60 * 60_000;
    await expect(t.attempts.attempt({ ...t.input(1), workflowId: 'wf-a' })).resolves.toMatchObject({
      retryInMs: 60 * 60_000,
    });
    expect(parked.count('h1')).toBe(1);
    t.close();
  });
});
