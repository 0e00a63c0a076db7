import { HookRepository, type HookRecord } from '../../../src/storage/hooks/hook.repository';
import { RoutingHooks } from '../../../src/webhooks/routing-hooks';

/** Lists by (tenant, party) from an array; `queries` counts what reached the "database". */
function fakeRepository(hooks: Array<Pick<HookRecord, 'id' | 'tenantId' | 'partyId'>>) {
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

describe('RoutingHooks', () => {
  let clock = 0;
  const caches: RoutingHooks[] = [];
  const make = (repo: HookRepository) => {
    const c = new RoutingHooks(repo, 2_000, () => clock);
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
    const db = fakeRepository([
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
    const db = fakeRepository([
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
    const db = fakeRepository([{ id: 'a', tenantId: 't1', partyId: null }]);
    const cache = make(db.repo);
    const reading = cache.listForRouting('t1', null);
    cache.forgetTenant('t1');
    await reading;
    await cache.listForRouting('t1', null);
    expect(db.queries()).toBe(2);
  });
});
