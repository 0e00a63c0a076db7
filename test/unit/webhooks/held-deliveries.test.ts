import { randomUUID } from 'node:crypto';
import type { DeliverWebhookInput } from '../../../workflows/contracts/deliver-webhook';
import type { ClaimedDelivery, HeldDeliveryDoc } from '../../../src/storage/events/held-delivery.repository';
import {
  CLAIM_LEASE_MS,
  HeldDeliveries,
  HeldRecordBusyError,
  LEASE_MARGIN_MS,
  releaseSpreadMs,
  SWEEP_BATCH,
  type HeldStore,
} from '../../../src/webhooks/held-deliveries';
import type { DeliveryMeta } from '../../../src/webhooks/publish';
import { invoiceReceivedEvent } from './hook-fixture';

/**
 * The repository's rules in memory: records are inserted by their holding run and never changed; claims are numbered
 * documents (number n+1 only once n has expired); only a claim's holder removes a record.
 */
class MemoryStore implements HeldStore {
  readonly docs = new Map<string, HeldDeliveryDoc>();
  /** Claim documents by `<workflow id>/<seq>#<n>`. */
  readonly claims = new Map<string, { key: string; owner: string; until: Date; workflowId: string; hookId: string }>();
  private take(doc: HeldDeliveryDoc, owner: string, now: Date, until: Date): ClaimedDelivery | null {
    const key = `${doc._id}/${doc.seq}`;
    for (let n = 1; ; n++) {
      const c = this.claims.get(`${key}#${n}`);
      if (!c) {
        this.claims.set(`${key}#${n}`, { key, owner, until, workflowId: doc._id, hookId: doc.hookId });
        return { ...doc, claimNo: n, claimUntil: until };
      }
      if (c.owner === owner) return { ...doc, claimNo: n, claimUntil: c.until };
      if (c.until > now) return null;
    }
  }
  /** The live claim on a record, if any. */
  liveClaim(id: string, now: Date): { owner: string; until: Date } | undefined {
    const d = this.docs.get(id);
    return [...this.claims.values()].find((c) => d && c.key === `${id}/${d.seq}` && c.until > now);
  }
  async hold(doc: Omit<HeldDeliveryDoc, 'seq'>): Promise<string | null> {
    const existing = this.docs.get(doc._id);
    if (existing?.heldByRunId === doc.heldByRunId) return existing.seq;
    if (existing) {
      const c = this.take(existing, `run:${doc.heldByRunId}`, new Date(), new Date(Date.now() + 60_000));
      if (!c) return null;
      await this.remove(c);
    }
    const seq = randomUUID();
    this.docs.set(doc._id, { ...doc, seq });
    return seq;
  }
  async claim(id: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | null> {
    const d = this.docs.get(id);
    return d ? this.take(d, randomUUID(), now, new Date(now.getTime() + leaseMs)) : null;
  }
  async claimDue(now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const due = [...this.docs.values()]
      .filter((d) => d.dueAt <= now)
      .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
    const ids = new Set(due.map((d) => d._id).slice(0, limit));
    for (const c of this.claims.values()) if (c.until <= now && ids.size < limit) ids.add(c.workflowId);
    const out: ClaimedDelivery[] = [];
    for (const id of ids) {
      const c = await this.claim(id, now, leaseMs);
      if (c) out.push(c);
    }
    return out;
  }
  async remove(c: ClaimedDelivery): Promise<void> {
    if (this.docs.get(c._id)?.seq === c.seq) this.docs.delete(c._id);
    for (let n = 1; n <= c.claimNo; n++) this.claims.delete(`${c._id}/${c.seq}#${n}`);
  }
  async unclaimedIdsForHook(
    hookId: string,
    now: Date,
    limit: number,
    order: 'oldest' | 'newest' = 'oldest',
  ): Promise<string[]> {
    const free = [...this.docs.values()].filter((d) => d.hookId === hookId && !this.liveClaim(d._id, now));
    const sign = order === 'oldest' ? 1 : -1;
    return free
      .sort((a, b) => sign * (a.heldAt.getTime() - b.heldAt.getTime()))
      .slice(0, limit)
      .map((d) => d._id);
  }
  async hookIdsWithHeld(): Promise<string[]> {
    return [...new Set([...this.docs.values()].map((d) => d.hookId))];
  }
}

function input(n: number, attempts = 0): DeliverWebhookInput {
  return {
    tenantId: 't1',
    eventId: `e${n}`,
    hookId: 'h1',
    deliveryId: `d${n}`,
    schedule: { kind: 'table', delaysMs: [1000] },
    maxAttemptTimeoutMs: 10_000,
    event: { ...invoiceReceivedEvent, id: `e${n}`, topic: 'Topic' },
    eventPartyKey: '0106:1',
    resume: { attempts, startedAtMs: 1_000, throttled: 2 },
  };
}

function setup(answers: Array<'started' | 'running' | Error> = [], holderEndWaitMs = 3_000, store = new MemoryStore()) {
  const clock = { ms: 1_000_000 };
  const restarts: Array<{ input: DeliverWebhookInput; meta: DeliveryMeta; startDelayMs: number }> = [];
  const latestRuns = new Map<string, string>();
  const held = new HeldDeliveries(
    store,
    async (i, meta, startDelayMs) => {
      restarts.push({ input: i, meta, startDelayMs });
      const a = answers.shift() ?? 'started';
      if (a instanceof Error) throw a;
      return a;
    },
    { latestRunId: async (id) => latestRuns.get(id) ?? 'run-holder' },
    { now: () => clock.ms, random: () => 0.5, holderEndWaitMs },
  );
  const hold = (n: number, dueInMs: number, attempts = 0) =>
    held.hold({ workflowId: `wf-${n}`, runId: 'run-holder', input: input(n, attempts), dueInMs });
  /** The release a timeout of the hook makes: the newest held delivery. */
  const releaseNewest = () =>
    held.releaseNewest('h1', (_id, e) => {
      throw e;
    });
  return { store, clock, restarts, latestRuns, held, hold, releaseNewest };
}

describe('HeldDeliveries', () => {
  it('holds a delivery with its progress and search attributes, due when the run said', async () => {
    const { store, clock, hold } = setup();
    await hold(1, 15 * 60_000, 2);
    const d = store.docs.get('wf-1')!;
    expect(d).toMatchObject({
      tenantId: 't1',
      hookId: 'h1',
      topic: 'Topic',
      partyKey: '0106:1',
      heldAt: new Date(clock.ms),
      dueAt: new Date(clock.ms + 15 * 60_000),
    });
    expect(JSON.parse(d.input)).toEqual(input(1, 2));
  });

  it('releases a held delivery on an answer: its next run starts from the stored input, the record goes', async () => {
    const { store, restarts, held, hold } = setup();
    await hold(1, 15 * 60_000, 2);
    await expect(held.releaseHook('h1', () => undefined)).resolves.toBe(1);
    expect(restarts).toEqual([
      {
        input: input(1, 2),
        meta: { topic: 'Topic', partyKey: '0106:1' },
        startDelayMs: Math.round(0.5 * releaseSpreadMs(1)),
      },
    ]);
    expect(store.docs.size).toBe(0);
  });

  it('releases the newest held delivery alone on a timeout, at once; none when all are claimed', async () => {
    const { store, clock, restarts, hold, releaseNewest } = setup();
    await hold(1, 60_000);
    clock.ms += 1;
    await hold(2, 60_000);
    await expect(releaseNewest()).resolves.toBe(true);
    expect(restarts.map((r) => [r.input.deliveryId, r.startDelayMs])).toEqual([['d2', 0]]);
    expect([...store.docs.keys()]).toEqual(['wf-1']);
    await store.claim('wf-1', new Date(clock.ms), CLAIM_LEASE_MS);
    await expect(releaseNewest()).resolves.toBe(false);
    expect(restarts).toHaveLength(1);
  });

  it('waits for the run that held the delivery to end, however many tries that takes; keeps the record if it never does', async () => {
    // A busy worker: the holder ends only after eight tries (4.5 s of pauses; a release once gave up after 3 s).
    const a = setup([...Array.from({ length: 8 }, () => 'running' as const), 'started'], 20_000);
    await a.hold(1, 60_000);
    await a.releaseNewest();
    expect(a.restarts).toHaveLength(9);
    expect(a.store.docs.size).toBe(0);

    const b = setup(
      Array.from({ length: 50 }, () => 'running' as const),
      2_000,
    );
    await b.hold(1, 60_000);
    await b.releaseNewest();
    // Pauses of 50, 100, 200, 400, 800 ms fit in 2 s, the next would not: six tries.
    expect(b.restarts).toHaveLength(6);
    // Still held, claimed for the lease: the sweep takes it up once that has passed, and no release before.
    expect(b.store.liveClaim('wf-1', new Date(b.clock.ms))!.until).toEqual(new Date(b.clock.ms + CLAIM_LEASE_MS));
    await b.releaseNewest();
    expect(b.restarts).toHaveLength(6);
    b.clock.ms += CLAIM_LEASE_MS;
    await expect(b.held.releaseDue()).resolves.toBe(0);
    expect(b.restarts).toHaveLength(12);
  }, 30_000);

  it('gives a claimed record to its release alone: a second release meanwhile starts nothing (no second send)', async () => {
    // The holder ends after two tries; the second release comes while the first waits for it.
    const { store, restarts, hold, releaseNewest } = setup(['running', 'running', 'started', 'started']);
    await hold(1, 60_000);
    const first = releaseNewest();
    await new Promise((r) => setTimeout(r, 20));
    // The record is claimed: the second release finds nothing to release.
    await expect(releaseNewest()).resolves.toBe(false);
    await first;
    expect(restarts).toHaveLength(3);
    expect(store.docs.size).toBe(0);
  });

  it('stops waiting when a run started since has the delivery (another release, once this claim lapsed): no second start', async () => {
    const { store, restarts, latestRuns, hold, releaseNewest } = setup(['running', 'running', 'started']);
    await hold(1, 60_000);
    const release = releaseNewest();
    await new Promise((r) => setTimeout(r, 20));
    latestRuns.set('wf-1', 'run-of-another-release');
    await release;
    expect(restarts).toHaveLength(2);
    expect(store.docs.size).toBe(0);
  });

  it("releases every delivery held for a hook on its answer, page by page, leaving other hooks' and claimed ones", async () => {
    const { store, clock, restarts, held } = setup();
    const n = SWEEP_BATCH + 5;
    for (let i = 0; i < n; i++) {
      clock.ms += 1;
      await held.hold({ workflowId: `wf-${i}`, runId: 'run-holder', input: input(i), dueInMs: 60 * 60_000 });
    }
    await held.hold({
      workflowId: 'wf-other',
      runId: 'run-holder',
      input: { ...input(999), hookId: 'h2' },
      dueInMs: 60 * 60_000,
    });
    // One is under another release's claim: that release has it.
    await store.claim('wf-3', new Date(clock.ms), CLAIM_LEASE_MS);
    const errors: string[] = [];
    await expect(held.releaseHook('h1', (id) => errors.push(id))).resolves.toBe(n - 1);
    expect([...store.docs.keys()].sort()).toEqual(['wf-3', 'wf-other']);
    expect(new Set(restarts.map((r) => r.input.deliveryId)).size).toBe(n - 1);
    // Spread as a release of that many: the fixed random 0.5 puts each start at half the page's spread.
    expect(restarts[0]!.startDelayMs).toBe(Math.round(0.5 * releaseSpreadMs(SWEEP_BATCH)));
    expect(restarts.at(-1)!.startDelayMs).toBe(Math.round(0.5 * releaseSpreadMs(4)));
    expect(errors).toEqual([]);
  });

  it('knows which hooks have held deliveries: its own holds at once, those held elsewhere from the sweep, none once released', async () => {
    // Two workers on one store.
    const a = setup();
    const b = setup([], undefined, a.store);
    await a.hold(1, 60 * 60_000);
    expect(a.held.hasHeld('h1')).toBe(true);
    expect(b.held.hasHeld('h1')).toBe(false);
    const sweep = b.held.startSweeping(60_000, (e) => {
      throw e;
    });
    for (let i = 0; i < 50 && !b.held.hasHeld('h1'); i++) await new Promise((r) => setTimeout(r, 5));
    await sweep.stop();
    expect(b.held.hasHeld('h1')).toBe(true);
    await expect(b.held.releaseHook('h1', () => undefined)).resolves.toBe(1);
    expect(b.held.hasHeld('h1')).toBe(false);
    expect(a.store.docs.size).toBe(0);
  });

  it('reports a release on an answer that fails and goes on with the others; its record comes back after the lease', async () => {
    const { store, restarts, held, hold } = setup(['started', new Error('engine away'), 'started']);
    for (const i of [1, 2, 3]) await hold(i, 60 * 60_000);
    const errors: Array<[string, unknown]> = [];
    await expect(held.releaseHook('h1', (id, e) => errors.push([id, e]))).resolves.toBe(2);
    expect(restarts).toHaveLength(3);
    expect(errors.map(([id, e]) => [id, (e as Error).message])).toEqual([[errors[0]![0], 'engine away']]);
    expect([...store.docs.keys()]).toEqual([errors[0]![0]]);
  });

  it('drops a record that a run started after the hold has taken over (a redelivery), instead of sending it again', async () => {
    const { store, restarts, latestRuns, held, hold } = setup();
    await hold(1, 0);
    await hold(2, 0);
    // wf-1's latest run is the one that held it; wf-2 was redelivered after the hold (a later run).
    latestRuns.set('wf-2', 'run-redelivered');
    await expect(held.releaseDue()).resolves.toBe(1);
    expect(restarts.map((r) => r.input.deliveryId)).toEqual(['d1']);
    expect(store.docs.size).toBe(0);
  });

  it("lets a later run hold once the earlier run's record is no release's: never two records, none lost", async () => {
    const { store, held, hold, releaseNewest } = setup();
    const later = (runId: string) => ({ workflowId: 'wf-1', runId, input: input(1, 1), dueInMs: 60_000 });
    const seq = await hold(1, 60_000);
    // The same run's hold tried again finds its own record.
    await expect(hold(1, 60_000)).resolves.toBe(seq);
    // A release has the record (it started the next run and has not removed it yet): the next run waits.
    const claimed = (await store.claim('wf-1', new Date(), 60_000))!;
    await expect(held.hold(later('run-next'))).rejects.toBeInstanceOf(HeldRecordBusyError);
    await expect(held.tryHold(later('run-next'))).resolves.toBeUndefined();
    await store.remove(claimed);
    const next = await held.hold(later('run-next'));
    expect(store.docs.get('wf-1')).toMatchObject({ seq: next, heldByRunId: 'run-next' });
    // The release removing what it claimed after that leaves the newer record alone.
    await store.remove(claimed);
    expect(store.docs.get('wf-1')!.seq).toBe(next);
    // A record nobody has (left behind) is replaced by the later run's.
    const third = await held.hold(later('run-third'));
    expect(store.docs.get('wf-1')).toMatchObject({ seq: third, heldByRunId: 'run-third' });
    await releaseNewest();
    expect(store.docs.has('wf-1')).toBe(false);
  });

  it('starts nothing once its claim is near its end (another release may have claimed the record)', async () => {
    const a = setup(
      Array.from({ length: 50 }, () => 'running' as const),
      200_000,
    );
    await a.hold(1, 60_000);
    const release = a.releaseNewest();
    await new Promise((r) => setTimeout(r, 30));
    a.clock.ms += CLAIM_LEASE_MS - LEASE_MARGIN_MS + 1;
    await release;
    const tries = a.restarts.length;
    expect(tries).toBeLessThanOrEqual(2);
    expect(a.store.docs.has('wf-1')).toBe(true);
  });

  it('sweeps what fell due, oldest due first, and leaves the rest; a failed start does not stop the others', async () => {
    const { store, clock, restarts, held, hold } = setup(['started', new Error('engine away'), 'started']);
    await hold(1, 10_000);
    await hold(2, 5_000);
    await hold(3, 1_000);
    await hold(4, 10 * 60_000);
    clock.ms += 10_000;
    await expect(held.releaseDue()).rejects.toThrow('engine away');
    expect(restarts.map((r) => r.input.deliveryId)).toEqual(['d3', 'd2', 'd1']);
    // d2's start failed: still held, claimed for the lease, then due again.
    expect([...store.docs.keys()].sort()).toEqual(['wf-2', 'wf-4']);
    await expect(held.releaseDue()).resolves.toBe(0);
    clock.ms += CLAIM_LEASE_MS;
    await expect(held.releaseDue()).resolves.toBe(1);
    expect([...store.docs.keys()]).toEqual(['wf-4']);
  });

  it('sweeps on its interval until stopped, reporting a failed sweep and going on', async () => {
    const { store, held, hold } = setup();
    const errors: unknown[] = [];
    let calls = 0;
    const real = store.claimDue.bind(store);
    store.claimDue = async (...args) => {
      calls += 1;
      if (calls === 1) throw new Error('database away');
      return real(...args);
    };
    await hold(1, 0);
    const sweep = held.startSweeping(20, (e) => errors.push(e));
    for (let i = 0; i < 100 && store.docs.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    await sweep.stop();
    expect(errors).toHaveLength(1);
    expect(store.docs.size).toBe(0);
    const after = calls;
    await new Promise((r) => setTimeout(r, 60));
    expect(calls).toBe(after);
  });
});
