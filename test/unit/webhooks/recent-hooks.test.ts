import type { HookRecord, HookRepository } from '../../../src/storage/hooks/hook.repository';
import { RecentHooks } from '../../../src/webhooks/recent-hooks';
import { hookRecord } from './hook-fixture';

/** A hook store that counts reads; `set` stands for a write made in another process (no change notice). */
function fakeRepository() {
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

describe('RecentHooks', () => {
  let clock = 0;
  const caches: RecentHooks[] = [];
  const make = (repo: HookRepository, ttl = 2_000) => {
    const c = new RecentHooks(repo, ttl, () => clock);
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
    const db = fakeRepository();
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
    const db = fakeRepository();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    await cache.get('t1', 'h1', 0);
    db.set({ id: 'h1', url: 'https://receiver.example/fixed' });
    // Within the ttl, with the old rev: the copy may be used (a change after the publish, in another process).
    expect((await cache.get('t1', 'h1', 0))?.url).toBe('https://receiver.example/a');
    expect((await cache.get('t1', 'h1', 1))?.url).toBe('https://receiver.example/fixed');
    expect(db.reads()).toBe(2);
  });

  it('always reads without a rev (retries, older runs) and refreshes the copy', async () => {
    const db = fakeRepository();
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
    const db = fakeRepository();
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
    const db = fakeRepository();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    const stale = cache.get('t1', 'h1', 0);
    cache.forget('h1');
    await stale;
    await cache.get('t1', 'h1', 0);
    expect(db.reads()).toBe(2);
  });

  it('shares one read among first attempts that miss together', async () => {
    const db = fakeRepository();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    const all = await Promise.all([cache.get('t1', 'h1', 0), cache.get('t1', 'h1', 0), cache.get('t1', 'h1', 0)]);
    expect(all.map((h) => h?.id)).toEqual(['h1', 'h1', 'h1']);
    expect(db.reads()).toBe(1);
  });

  it('keeps tenants apart and does not cache a missing hook', async () => {
    const db = fakeRepository();
    db.set({ id: 'h1' });
    const cache = make(db.repo);
    await cache.get('t1', 'h1', 0);
    expect(await cache.get('t2', 'h1', 0)).toBeNull();
    db.remove('h1');
    expect(await cache.get('t1', 'h1')).toBeNull();
    expect(await cache.get('t1', 'h1', 0)).toBeNull();
  });
});
