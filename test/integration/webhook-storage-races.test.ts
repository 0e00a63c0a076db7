import { randomUUID } from 'node:crypto';
import mongoose, { type Connection } from 'mongoose';
import type { DeliverWebhookInput } from '../../workflows/contracts/deliver-webhook';
import { EventRepository, type EventRecord } from '../../src/storage/events/event.repository';
import { HeldDeliveryRepository, type ClaimedDelivery } from '../../src/storage/events/held-delivery.repository';
import { HookRepository } from '../../src/storage/hooks/hook.repository';
import { buildModels, type Models } from '../../src/storage/models';
import { HeldDeliveries } from '../../src/webhooks/held-deliveries';
import { requireEnv, uniqueDbUri } from '../support/services';

/*
 * The webhook wing's exclusive claims and single-writer rules on the real database (the embedded FerretDB in
 * `npm test`), raced by many callers at once over two connections, as several workers and API processes would.
 * FerretDB makes no guarded update a compare-and-set, so each of these once let two callers win; every round here
 * must have exactly one winner.
 */

const ROUNDS = 30;
const RACERS = 8;
const LEASE_MS = 60_000;

describe('webhook storage under concurrent callers (two connections)', () => {
  let a: Connection;
  let b: Connection;
  let models: [Models, Models];
  let held: [HeldDeliveryRepository, HeldDeliveryRepository];

  beforeAll(async () => {
    const { mongodbUri } = requireEnv();
    const uri = uniqueDbUri(
      mongodbUri,
      `hookraces${randomUUID()
        .replace(/[^a-f]/g, '')
        .slice(0, 8)}`,
    );
    a = await mongoose.createConnection(uri, { autoIndex: false }).asPromise();
    b = await mongoose.createConnection(uri, { autoIndex: false }).asPromise();
    models = [buildModels(a), buildModels(b)];
    for (const m of Object.values(models[0])) await m.createCollection().catch(() => undefined);
    held = [new HeldDeliveryRepository(models[0]), new HeldDeliveryRepository(models[1])];
  });

  afterAll(async () => {
    await a?.dropDatabase().catch(() => undefined);
    await a?.close();
    await b?.close();
  });

  /** `RACERS` calls at once, alternating between the two connections. */
  const race = <T>(call: (side: 0 | 1, i: number) => Promise<T>): Promise<T[]> =>
    Promise.all(Array.from({ length: RACERS }, (_, i) => call((i % 2) as 0 | 1, i)));

  const input = (id: string, hookId: string): DeliverWebhookInput => ({
    tenantId: 't1',
    eventId: `e-${id}`,
    hookId,
    deliveryId: id,
    schedule: { kind: 'table', delaysMs: [1000] },
    maxAttemptTimeoutMs: 10_000,
    event: {
      id: `e-${id}`,
      topic: 'T',
      partyId: '',
      message: 'm',
      details: {},
      createdBy: 'test',
      createdOn: '2026-11-27T00:00:00.000Z',
    },
    eventPartyKey: null,
    resume: { attempts: 1, startedAtMs: Date.now(), throttled: 1 },
  });

  /** A record as a run holds it, due at once unless said otherwise. */
  async function holdRecord(hookId = `h-${randomUUID()}`, runId = 'run-1', dueInMs = 0, id = `wf-${randomUUID()}`) {
    const now = Date.now();
    const seq = await held[0].hold({
      _id: id,
      tenantId: 't1',
      hookId,
      input: JSON.stringify(input(id, hookId)),
      topic: 'T',
      partyKey: '',
      heldAt: new Date(now),
      heldByRunId: runId,
      dueAt: new Date(now + dueInMs),
    });
    return { id, hookId, seq: seq! };
  }

  it(`gives a held record to exactly one of ${RACERS} concurrent claims, and again once it expired`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { id } = await holdRecord();
      const now = Date.now();
      const first = await race((side) => held[side].claim(id, new Date(now), 1000));
      expect(first.filter(Boolean)).toHaveLength(1);
      // While it lasts nobody else claims it; after it, exactly one takes the next number.
      await expect(held[1].claim(id, new Date(now + 500), 1000)).resolves.toBeNull();
      const second = await race((side) => held[side].claim(id, new Date(now + 2000), 1000));
      expect(second.filter(Boolean).map((c) => c!.claimNo)).toEqual([2]);
      // Its holder removes it (nothing left for the sweeps below).
      await held[0].remove(second.find(Boolean)!);
    }
  });

  it('sweeps a record again once its claim lapsed without its removal, and clears claims left behind', async () => {
    const { id } = await holdRecord(undefined, 'run-1', 60 * 60_000);
    const now = Date.now();
    const failed = await held[0].claim(id, new Date(now), 1000);
    expect(failed?.claimNo).toBe(1);
    // Not due for an hour, but its claim ended without its removal: the sweep takes it up, as number 2.
    const swept = await held[1].claimDue(new Date(now + 1500), LEASE_MS, 1000);
    expect(swept.filter((c) => c._id === id).map((c) => c.claimNo)).toEqual([2]);
    await held[1].remove(swept.find((c) => c._id === id)!);
    // A claim whose record is gone (its holder stopped before dropping it) is removed by the next sweep.
    const ended = new Date(now);
    const orphan = {
      _id: `${id}/gone#1`,
      key: `${id}/gone`,
      n: 1,
      owner: 'x',
      at: ended,
      until: ended,
      workflowId: id,
    };
    await models[0].HeldClaim.collection.insertOne(orphan as never);
    for (const c of await held[0].claimDue(new Date(now + 1500), LEASE_MS, 1000)) await held[0].remove(c);
    await expect(models[1].HeldClaim.findById(orphan._id).lean().exec()).resolves.toBeNull();
  });

  it(`claims each due record for exactly one of ${RACERS} concurrent sweeps`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const hookId = `h-${randomUUID()}`;
      const ids = await Promise.all(Array.from({ length: 5 }, () => holdRecord(hookId).then((r) => r.id)));
      const claimed = (await race((side) => held[side].claimDue(new Date(), LEASE_MS, 1000))).flat();
      const mine = claimed.filter((c) => c.hookId === hookId).map((c) => c._id);
      expect(mine.sort()).toEqual([...ids].sort());
      for (const c of claimed) await held[0].remove(c);
    }
  });

  it('starts a held delivery’s next run once when workers release it together (timeouts, answers, sweep)', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const hookId = `h-${randomUUID()}`;
      const records = await Promise.all(Array.from({ length: 3 }, () => holdRecord(hookId, 'run-holder')));
      const starts = new Map<string, number>();
      const worker = (side: 0 | 1) =>
        new HeldDeliveries(
          held[side],
          async (i) => {
            starts.set(i.deliveryId, (starts.get(i.deliveryId) ?? 0) + 1);
            return 'started';
          },
          { latestRunId: async () => 'run-holder' },
        );
      const workers: [HeldDeliveries, HeldDeliveries] = [worker(0), worker(1)];
      await race(async (side, i) => {
        const w = workers[side];
        if (i % 4 === 0) return w.releaseDue();
        if (i % 4 === 1) return w.releaseHook(hookId, () => undefined);
        await Promise.all(records.map(() => w.releaseNewest(hookId, () => undefined)));
        return 0;
      });
      expect(records.map((r) => starts.get(r.id))).toEqual(records.map(() => 1));
      await expect(held[1].listForHook(hookId)).resolves.toEqual([]);
    }
  });

  it("leaves one record, not two or none, when a later run holds as a release removes the earlier one's", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { id, hookId } = await holdRecord(undefined, 'run-1', 60_000);
      const claimed = (await held[0].claim(id, new Date(), LEASE_MS)) as ClaimedDelivery;
      const later = {
        _id: id,
        tenantId: 't1',
        hookId,
        input: JSON.stringify(input(id, hookId)),
        topic: 'T',
        partyKey: '',
        heldAt: new Date(),
        heldByRunId: 'run-2',
        dueAt: new Date(Date.now() + 60_000),
      };
      // The later run tries until the release is done with the earlier record; the release removes it meanwhile.
      const holding = (async () => {
        for (;;) {
          const seq = await held[1].hold(later);
          if (seq) return seq;
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      await held[0].remove(claimed);
      const seq = await holding;
      const left = await held[0].listForHook(hookId);
      expect(left.map((d) => [d.heldByRunId, d.seq])).toEqual([['run-2', seq]]);
    }
  });

  it(`counts every one of ${RACERS} concurrent hook writes in rev and switches a hook off exactly once`, async () => {
    const hooks: [HookRepository, HookRepository] = [new HookRepository(models[0]), new HookRepository(models[1])];
    for (let round = 0; round < ROUNDS / 3; round++) {
      const hook = await hooks[0].create({
        id: `hook-${randomUUID()}`,
        tenantId: 't1',
        partyId: null,
        secureKey: 'a-secure-key-of-enough-length',
        action: 'https',
        name: 'start',
        url: 'https://example.com/hook',
        topic: 'T',
        topics: [],
        filter: null,
        output: [],
        mlsType: null,
        isActive: true,
        timeoutMs: null,
      });
      const fields = (i: number) => ({
        action: 'https',
        name: `name-${i}`,
        url: `https://example.com/${i}`,
        topic: 'T',
        topics: [],
        filter: null,
        mlsType: null,
        isActive: true,
        timeoutMs: null,
      });
      // Half update it, half switch it off (a 410 seen by several workers at once).
      const results = await race<unknown>((side, i) =>
        i % 2
          ? hooks[side].update({ tenantId: 't1' }, hook.id, fields(i), undefined)
          : hooks[side].disable('t1', hook.id, 'gone'),
      );
      const updates = results.filter((r) => typeof r === 'object' && r !== null).length;
      const switchedOff = results.filter((r) => r === true).length;
      expect(updates).toBe(RACERS / 2);
      // A disable after an update that switched it on again can switch it off again: at least one, each counted.
      expect(switchedOff).toBeGreaterThanOrEqual(1);
      const stored = (await hooks[1].get({ tenantId: 't1' }, hook.id))!;
      expect(stored.rev).toBe(updates + switchedOff);
      // Only disables: exactly one does it.
      await hooks[0].update({ tenantId: 't1' }, hook.id, fields(99), undefined);
      const offs = await race((side) => hooks[side].disable('t1', hook.id, 'gone'));
      expect(offs.filter(Boolean)).toHaveLength(1);
      // Deletes: exactly one does it, and the hook is gone.
      const deletes = await race((side) => hooks[side].delete({ tenantId: 't1' }, hook.id));
      expect(deletes.filter(Boolean)).toHaveLength(1);
      await expect(hooks[0].get({ tenantId: 't1' }, hook.id)).resolves.toBeNull();
    }
  });

  it(`keeps every route when ${RACERS} redeliveries of one event to other hooks record routings at once`, async () => {
    const events: [EventRepository, EventRepository] = [new EventRepository(models[0]), new EventRepository(models[1])];
    for (let round = 0; round < ROUNDS / 3; round++) {
      const event: EventRecord = {
        id: randomUUID(),
        tenantId: 't1',
        topic: 'T',
        partyId: '',
        partyKey: null,
        documentId: null,
        refToDocumentId: null,
        message: '',
        details: {},
        createdBy: 'test',
        createdOn: new Date(),
        label: 'dead-letter',
        routes: [],
        targetHookId: null,
        excludeHookIds: [],
      };
      await events[0].insert(event);
      await race((side, i) =>
        events[side].updateRouting(event.id, (current) => ({
          label: 'routed',
          routes: [...current.routes, { hookId: `h${i}`, action: 'https', deliveryId: `d${i}`, status: 'started' }],
        })),
      );
      const stored = (await events[1].get('t1', event.id))!;
      expect(stored.label).toBe('routed');
      const expected = Array.from({ length: RACERS }, (_, i) => `h${i}`);
      expect(stored.routes.map((r) => r.hookId).sort()).toEqual(expected.sort());
      const listed = await events[0].list({ tenantIds: ['t1'], limit: 1000 });
      expect(listed.find((e) => e.id === event.id)?.routes).toHaveLength(RACERS);
    }
  });

  it('reports a delete by exact _id as done by exactly one of two racers (claims are removed by _id)', async () => {
    const collections = [models[0].HeldClaim.collection, models[1].HeldClaim.collection] as const;
    for (let round = 0; round < ROUNDS; round++) {
      const id = `del-${randomUUID()}`;
      const now = new Date();
      await collections[0].insertOne({ _id: id as never, key: 'k', n: 1, owner: 'o', at: now, until: now });
      const results = await Promise.all(([0, 1] as const).map((i) => collections[i].deleteOne({ _id: id as never })));
      expect(results.map((r) => r.deletedCount).sort()).toEqual([0, 1]);
    }
  });
});
