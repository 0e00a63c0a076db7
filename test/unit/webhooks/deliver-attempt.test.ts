import type { DeliveryAttemptDoc, DeliveryLogRepository } from '../../../src/storage/events/event.repository';
import type { HookRecord, HookRepository } from '../../../src/storage/hooks/hook.repository';
import { WEBHOOK_RETRY_SCHEDULE } from '../../../src/core/retry-schedule';
import { Admission, type AttemptRun } from '../../../src/webhooks/admission';
import { HookConcurrency } from '../../../src/webhooks/concurrency';
import { DeliveryAttempts, type AttemptInput } from '../../../src/webhooks/deliver-attempt';
import { Dispatch, logLineId } from '../../../src/webhooks/dispatch';
import type { GatewayEvent } from '../../../src/webhooks/event-payload';
import type { HeldDeliveries, HoldDeliveryInput } from '../../../src/webhooks/held-deliveries';
import { HookCache } from '../../../src/webhooks/hook-cache';
import type { SendRequest, WebhookSender } from '../../../src/webhooks/http-sender';
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

/** Held deliveries as admission sees them: what it holds, and which releases the hook's outcomes ask for. */
function fakeHeld(options: { busy?: boolean; heldFor?: string[] } = {}) {
  const holds: HoldDeliveryInput[] = [];
  const released: string[] = [];
  const hooks = new Set(options.heldFor ?? []);
  const held = {
    async tryHold(h: HoldDeliveryInput) {
      if (options.busy) return undefined;
      hooks.add(h.input.hookId);
      holds.push(h);
      return `seq-${holds.length}`;
    },
    hasHeld: (hookId: string) => hooks.has(hookId),
    async releaseHook(hookId: string) {
      released.push(`all of ${hookId}`);
      hooks.delete(hookId);
      return 1;
    },
    async releaseNewest(hookId: string) {
      released.push(`newest of ${hookId}`);
      return true;
    },
  };
  return { held: held as unknown as HeldDeliveries, holds, released, hooks };
}

function setup(options: { held?: HeldDeliveries } = {}) {
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
  const hookCache = new HookCache(hooks, 2_000, () => clock.ms);
  const concurrency = new HookConcurrency(5, () => clock.ms);
  const admission = new Admission({
    cap: concurrency,
    ...(options.held ? { held: options.held } : {}),
    now: () => clock.ms,
    random: () => 1,
  });
  const dispatch = new Dispatch({ hooks, deliveryLog, sender, maxTimeoutMs: 10_000, hookCache });
  const attempts = new DeliveryAttempts(admission, dispatch);
  /** What a run offers with its attempt (workflow `wf`, started `startedAgoMs` ago, `throttled` refusals so far). */
  const run = (wf: string, throttled = 0, startedAgoMs = 0): AttemptRun => ({
    workflowId: wf,
    runId: `${wf}-run`,
    input: {
      tenantId: 't1',
      eventId: event.id,
      hookId: 'h1',
      deliveryId: 'd-1',
      schedule: WEBHOOK_RETRY_SCHEDULE,
      maxAttemptTimeoutMs: 10_000,
      eventPartyKey: null,
    },
    progress: { attempts: 0, startedAtMs: clock.ms - startedAgoMs, throttled },
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
    run,
    reads: () => reads,
    change(fields: Partial<HookRecord>) {
      hook = { ...hook, ...fields, rev: hook.rev + 1 };
    },
    close: () => hookCache.close(),
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
    // Without a rev (routing did not see the hook) the attempt reads too.
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

describe('DeliveryAttempts: deliveries of a stuck hook', () => {
  /** Narrows h1 to one slot by timeouts, holds that slot, and lets 6 s pass without an answer: the hook is stuck. */
  function stick(t: ReturnType<typeof setup>): () => void {
    for (let i = 0; i < 3; i++) t.concurrency.recordOutcome('h1', true);
    const release = t.concurrency.tryAcquire('h1');
    if (!release) throw new Error('no slot');
    t.clock.ms += 6_000;
    expect(t.concurrency.isStuck('h1')).toBe(true);
    return release;
  }

  it('holds a try on a stuck hook with the run’s input, the event and its progress, due after minutes', async () => {
    const f = fakeHeld();
    const t = setup({ held: f.held });
    stick(t);
    await expect(t.attempts.attempt({ ...t.input(1), run: t.run('wf-a', 2) })).resolves.toEqual({
      kind: 'held',
      seq: 'seq-1',
    });
    expect(t.sent).toHaveLength(0);
    expect(t.lines).toHaveLength(0);
    const [h] = f.holds;
    expect(h).toMatchObject({ workflowId: 'wf-a', runId: 'wf-a-run', dueInMs: 15 * 60_000 });
    expect(h?.input).toMatchObject({
      hookId: 'h1',
      schedule: WEBHOOK_RETRY_SCHEDULE,
      event,
      resume: { attempts: 0, startedAtMs: t.clock.ms, throttled: 3 },
    });
    t.close();
  });

  it('waits longer the longer the hook has been stuck, up to an hour', async () => {
    const f = fakeHeld();
    const t = setup({ held: f.held });
    stick(t);
    await t.attempts.attempt({ ...t.input(1), run: t.run('wf-a') });
    t.clock.ms += 20 * 60_000;
    await t.attempts.attempt({ ...t.input(1), run: t.run('wf-b') });
    t.clock.ms += 3 * 60 * 60_000;
    await t.attempts.attempt({ ...t.input(1), run: t.run('wf-c') });
    expect(f.holds.map((h) => h.dueInMs)).toEqual([15 * 60_000, 20 * 60_000 + 6_000, 60 * 60_000]);
    t.close();
  });

  it("leaves the hold to the run's own step while an earlier run's record is still being released", async () => {
    const f = fakeHeld({ busy: true });
    const t = setup({ held: f.held });
    stick(t);
    await expect(t.attempts.attempt({ ...t.input(1), run: t.run('wf-a') })).resolves.toEqual({
      kind: 'hold',
      dueInMs: 15 * 60_000,
    });
    t.close();
  });

  it('holds nothing past the bound of waiting for a slot: the run gives up instead', async () => {
    const f = fakeHeld();
    const t = setup({ held: f.held });
    stick(t);
    const fiveDays = 5 * 24 * 3600_000;
    await expect(t.attempts.attempt({ ...t.input(1), run: t.run('wf-a', 0, fiveDays) })).resolves.toEqual({
      kind: 'overdue',
    });
    expect(f.holds).toEqual([]);
    t.close();
  });

  it('sends a try that finds the hook busy, not stuck, back for a short wait that doubles', async () => {
    const t = setup({ held: fakeHeld().held });
    for (let i = 0; i < 3; i++) t.concurrency.recordOutcome('h1', true);
    t.concurrency.tryAcquire('h1');
    await expect(t.attempts.attempt({ ...t.input(1), run: t.run('wf-a') })).resolves.toEqual({
      kind: 'throttled',
      waitMs: 100,
    });
    await expect(t.attempts.attempt({ ...t.input(1), run: t.run('wf-a', 3) })).resolves.toEqual({
      kind: 'throttled',
      waitMs: 800,
    });
    t.close();
  });

  it('without held deliveries or a run to hold, comes back after about as long as the hook was stuck', async () => {
    const t = setup();
    stick(t);
    await expect(t.attempts.attempt({ ...t.input(1), run: t.run('wf-a') })).resolves.toEqual({
      kind: 'throttled',
      waitMs: 30_000,
    });
    const u = setup({ held: fakeHeld().held });
    stick(u);
    await expect(u.attempts.attempt(u.input(1))).resolves.toEqual({ kind: 'throttled', waitMs: 30_000 });
    t.close();
    u.close();
  });

  it('releases all held on any answer (an error status too), the newest on a timeout, none on a reset', async () => {
    const f = fakeHeld({ heldFor: ['h1'] });
    const t = setup({ held: f.held });
    t.answers.push('timeout', 'reset', 503, 204);
    // The timeout frees the slot: the delivery held last (a ping sent after a fix, say) is released to try it.
    await expect(t.attempts.attempt(t.input(2))).resolves.toMatchObject({ kind: 'failed', timedOut: true });
    await Promise.resolve();
    expect(f.released).toEqual(['newest of h1']);
    await expect(t.attempts.attempt(t.input(3))).resolves.toMatchObject({ kind: 'failed', timedOut: false });
    await Promise.resolve();
    expect(f.released).toEqual(['newest of h1']);
    await expect(t.attempts.attempt(t.input(4))).resolves.toMatchObject({ kind: 'sent', httpStatus: 503 });
    await Promise.resolve();
    expect(f.released).toEqual(['newest of h1', 'all of h1']);
    // Nothing known to be held any more: an answer costs no look.
    await expect(t.attempts.attempt(t.input(5))).resolves.toMatchObject({ kind: 'sent', ok: true });
    await Promise.resolve();
    expect(f.released).toEqual(['newest of h1', 'all of h1']);
    t.close();
  });

  it('releases every held delivery when the hook turns out switched off, so they end instead of waiting', async () => {
    const f = fakeHeld({ heldFor: ['h1'] });
    const t = setup({ held: f.held });
    t.change({ isActive: false });
    await expect(t.attempts.attempt(t.input(2))).resolves.toMatchObject({ kind: 'skipped', reason: 'hook-inactive' });
    await Promise.resolve();
    expect(f.released).toEqual(['all of h1']);
    t.close();
  });
});
