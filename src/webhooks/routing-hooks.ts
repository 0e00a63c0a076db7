import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import { onHookChange } from '../storage/hooks/hook.repository';

/**
 * The active hooks routing considers for a (tenant, party), kept for `ttlMs` after they were read, so a stream of
 * events of one party routes with one hook query per `ttlMs` instead of one per event. A hook write in this process
 * (create, update, delete, the worker's 410 switch-off) drops the tenant's lists at once; a write in another process
 * reaches routing here within `ttlMs` (decisions.md "Routing from recently read hooks").
 */

export const ROUTING_HOOKS_TTL_MS = 2_000;
/** Bounds memory: (tenant, party) lists kept at once; the oldest go first. */
const MAX_LISTS = 5_000;

interface Entry {
  hooks: HookRecord[];
  readAt: number;
}

export interface RoutingHookSource {
  listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]>;
}

export class RoutingHooks implements RoutingHookSource {
  /** tenant → party key ("" for environment-only) → list. */
  private readonly lists = new Map<string, Map<string, Entry>>();
  private size = 0;
  private readonly unsubscribe: () => void;
  /** Writes seen per tenant: a read that a write overtook does not fill the cache. */
  private readonly writes = new Map<string, number>();

  constructor(
    private readonly hooks: HookRepository,
    private readonly ttlMs: number = ROUTING_HOOKS_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = onHookChange((tenantId) => this.forgetTenant(tenantId));
  }

  async listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]> {
    const key = partyKey ?? '';
    const entry = this.lists.get(tenantId)?.get(key);
    if (entry && this.now() - entry.readAt < this.ttlMs) return entry.hooks;
    const readAt = this.now();
    const writes = this.writes.get(tenantId) ?? 0;
    const hooks = await this.hooks.listForRouting(tenantId, partyKey);
    if ((this.writes.get(tenantId) ?? 0) === writes) this.remember(tenantId, key, { hooks, readAt });
    return hooks;
  }

  forgetTenant(tenantId: string): void {
    this.writes.set(tenantId, (this.writes.get(tenantId) ?? 0) + 1);
    const lists = this.lists.get(tenantId);
    if (lists) {
      this.size -= lists.size;
      this.lists.delete(tenantId);
    }
  }

  close(): void {
    this.unsubscribe();
    this.lists.clear();
    this.size = 0;
  }

  private remember(tenantId: string, key: string, entry: Entry): void {
    if (this.size >= MAX_LISTS) {
      // Whole tenants go, oldest inserted first: simple, and a full cache is rare.
      const oldest = this.lists.keys().next();
      if (!oldest.done) this.forgetTenant(oldest.value);
    }
    let lists = this.lists.get(tenantId);
    if (!lists) {
      lists = new Map();
      this.lists.set(tenantId, lists);
    }
    if (!lists.has(key)) this.size += 1;
    lists.set(key, entry);
  }
}
