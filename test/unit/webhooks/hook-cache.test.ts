import { HookRepository, type HookRecord } from '../../../src/storage/hooks/hook.repository';
import { HookCache } from '../../../src/webhooks/hook-cache';
import { hookRecord } from './hook-fixture';

/** A hook store that counts reads; `set` stands for a write made in another process (no change notice). */
function hookStore() {
  const stored = new Map<string, HookRecord>();
  let reads = 0;
  const repo = {
    async findInTenants(tenantIds: readonly string[], hookId: string): Promise<HookRecord | null> {
      reads += 1;
      await new Promise((r) => setImmediate(r));
      const h = stored.get(hookId);
      return h && tenantIds.includes(h.tenantId) ? { ...h } : null;
    },
  };
  return {
    repo: repo as unknown as HookRepository,
    reads: () => reads,
    set(hook: Partial<HookRecord> & { id: string }) {
      const prev = stored.get(hook.id);
      stored.set(hook.id, { ...hookRecord(hook.id), ...prev, ...hook, rev: (prev?.rev ?? -1) + 1 });
    },
    remove: (id: string) => stored.delete(id),
  };
}

describe('HookCache: hooks for first attempts', () => {
  let clock = 0;
  const caches: HookCache[] = [];
  const make = (repo: HookRepository, ttl = 2_000) => {
    const c = new HookCache(repo, ttl, () => clock);
    caches.push(c);
    return c;
  };
  beforeEach(() => {
    clock = 1_000_000;
  });
  afterEach(() => {
    for (const c of caches.splice(0)) c.close();
  });

  it('reads a hook once per ttl for first attempts whose routing saw the same rev or an older one', async () => {
    const db = hookStore();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    expect((await cache.get('t1', 'h1', 0))?.url).toBe('https://receiver.example/a');
    for (let i = 0; i < 5; i++) await cache.get('t1', 'h1', 0);
    expect(db.reads()).toBe(1);
    clock += 2_000;
    await cache.get('t1', 'h1', 0);
    expect(db.reads()).toBe(2);
  });

  it('reads again when routing saw a newer rev than the cached one (a change before the publish is always used)', async () => {
    const db = hookStore();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    await cache.get('t1', 'h1', 0);
    db.set({ id: 'h1', url: 'https://receiver.example/fixed' });
    // Within the ttl, with the old rev: the copy may be used (a change after the publish, in another process).
    expect((await cache.get('t1', 'h1', 0))?.url).toBe('https://receiver.example/a');
    expect((await cache.get('t1', 'h1', 1))?.url).toBe('https://receiver.example/fixed');
    expect(db.reads()).toBe(2);
  });

  it('always reads without a rev (retries) and refreshes the copy', async () => {
    const db = hookStore();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    await cache.get('t1', 'h1', 0);
    db.set({ id: 'h1', url: 'https://receiver.example/fixed' });
    expect((await cache.get('t1', 'h1'))?.url).toBe('https://receiver.example/fixed');
    expect((await cache.get('t1', 'h1', 0))?.url).toBe('https://receiver.example/fixed');
    expect(db.reads()).toBe(2);
  });

  it('drops a hook at once when this process writes it', async () => {
    const { HookRepository } = await import('../../../src/storage/hooks/hook.repository');
    const updated: Record<string, unknown>[] = [];
    // The stored hook, read by id; the write lease is an insert that lands; the switch-off one update.
    const stored = { _id: 'h1', tenantId: 't1', partyId: null, action: 'https', isActive: true, rev: 0 };
    const models = {
      Hook: {
        findById: () => ({ lean: () => ({ exec: async () => ({ ...stored }) }) }),
        collection: {
          updateOne: async (filter: Record<string, unknown>) => {
            updated.push(filter);
            return { modifiedCount: 1 };
          },
        },
      },
      HookWrite: { collection: { insertOne: async () => ({}), deleteMany: async () => ({}) } },
    };
    const writer = new HookRepository(models as never);
    const db = hookStore();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    await cache.get('t1', 'h1', 0);
    db.set({ id: 'h1', isActive: false });
    await writer.disable('t1', 'h1', 'gone');
    expect(updated).toHaveLength(1);
    expect((await cache.get('t1', 'h1', 0))?.isActive).toBe(false);
    expect(db.reads()).toBe(2);
  });

  it('does not fill the cache from a read that a write of this process overtook', async () => {
    const db = hookStore();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    const stale = cache.get('t1', 'h1', 0);
    cache.forgetHook('h1');
    await stale;
    await cache.get('t1', 'h1', 0);
    expect(db.reads()).toBe(2);
  });

  it('shares one read among first attempts that miss together', async () => {
    const db = hookStore();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    const all = await Promise.all([cache.get('t1', 'h1', 0), cache.get('t1', 'h1', 0), cache.get('t1', 'h1', 0)]);
    expect(all.map((h) => h?.id)).toEqual(['h1', 'h1', 'h1']);
    expect(db.reads()).toBe(1);
  });

  it('keeps tenants apart and does not cache a missing hook', async () => {
    const db = hookStore();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    await cache.get('t1', 'h1', 0);
    expect(await cache.get('t2', 'h1', 0)).toBeNull();
    db.remove('h1');
    expect(await cache.get('t1', 'h1')).toBeNull();
    expect(await cache.get('t1', 'h1', 0)).toBeNull();
  });
});

/** Lists by (tenant, party) from an array; `queries` counts what reached the "database". */
function listStore(hooks: Array<Pick<HookRecord, 'id' | 'tenantId' | 'partyId'>>) {
  let queries = 0;
  const repo = {
    async listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]> {
      queries += 1;
      await new Promise((r) => setImmediate(r));
      return hooks.filter(
        (h) => h.tenantId === tenantId && (h.partyId === null || h.partyId === partyKey),
      ) as HookRecord[];
    },
  };
  return { repo: repo as unknown as HookRepository, queries: () => queries, hooks };
}

/** A repository whose writes reach nothing but the process-wide change notice. */
const writer = new HookRepository({
  // No such hook: the write finds nothing to change, and still tells the caches.
  Hook: { findById: () => ({ lean: () => ({ exec: async () => null }) }) },
} as never);

describe('HookCache: hook lists for routing', () => {
  let clock = 0;
  const caches: HookCache[] = [];
  const make = (repo: HookRepository) => {
    const c = new HookCache(repo, 2_000, () => clock);
    caches.push(c);
    return c;
  };
  beforeEach(() => {
    clock = 5_000_000;
  });
  afterEach(() => {
    for (const c of caches.splice(0)) c.close();
  });

  it('queries each (tenant, party) once per ttl', async () => {
    const db = listStore([
      { id: 'env', tenantId: 't1', partyId: null },
      { id: 'p1', tenantId: 't1', partyId: '0106:1' },
    ]);
    const cache = make(db.repo);
    expect((await cache.listForRouting('t1', '0106:1')).map((h) => h.id)).toEqual(['env', 'p1']);
    expect((await cache.listForRouting('t1', '0106:1')).map((h) => h.id)).toEqual(['env', 'p1']);
    expect((await cache.listForRouting('t1', null)).map((h) => h.id)).toEqual(['env']);
    expect(db.queries()).toBe(2);
    clock += 1_999;
    await cache.listForRouting('t1', '0106:1');
    expect(db.queries()).toBe(2);
    clock += 1;
    await cache.listForRouting('t1', '0106:1');
    expect(db.queries()).toBe(3);
  });

  it('drops a tenant’s lists at once when this process writes one of its hooks, and only that tenant’s', async () => {
    const db = listStore([
      { id: 'a', tenantId: 't1', partyId: null },
      { id: 'b', tenantId: 't2', partyId: null },
    ]);
    const cache = make(db.repo);
    await cache.listForRouting('t1', null);
    await cache.listForRouting('t2', null);
    db.hooks.push({ id: 'a2', tenantId: 't1', partyId: null });
    await writer.delete({ tenantId: 't1' }, 'gone');
    expect((await cache.listForRouting('t1', null)).map((h) => h.id)).toEqual(['a', 'a2']);
    await cache.listForRouting('t2', null);
    expect(db.queries()).toBe(3);
  });

  it('does not keep a list that a write of this process overtook', async () => {
    const db = listStore([{ id: 'a', tenantId: 't1', partyId: null }]);
    const cache = make(db.repo);
    const reading = cache.listForRouting('t1', null);
    cache.forgetTenant('t1');
    await reading;
    await cache.listForRouting('t1', null);
    expect(db.queries()).toBe(2);
  });
});
