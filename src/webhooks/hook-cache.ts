import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import { onHookChange } from '../storage/hooks/hook.repository';

/**
 * Hooks read in the last `ttlMs`, per process: the one hook cache of the webhook wing. It serves
 * - routing (`listForRouting`): a party's active hooks, so a stream of events of one party routes with one hook query
 *   per `ttlMs` instead of one per event (decisions.md "Routing from recently read hooks");
 * - first attempts (`get` with the `rev` routing saw): a burst of events to one hook reads it once per `ttlMs` instead
 *   of once per delivery (decisions.md "Hook reads of first attempts"). A hook is taken from here only when it was
 *   read less than `ttlMs` ago and its `rev` is at least the one the publisher routed with, so a change made before
 *   the event was published (a new URL or key, then a Ping) is always seen. Callers without a `minRev` (retries)
 *   always read the database.
 * A hook write in this process (create, update, delete, the worker's 410 switch-off) drops the hook and its tenant's
 * lists at once, and a read that such a write overtook fills nothing; a write in another process reaches this one
 * within `ttlMs`.
 */

export const HOOK_CACHE_TTL_MS = 2_000;
/** Bounds memory: hooks, and (tenant, party) lists, kept at once; the oldest go first. */
const MAX_ENTRIES = 5_000;

interface HookEntry {
  hook: HookRecord;
  readAt: number;
}

interface ListEntry {
  hooks: HookRecord[];
  readAt: number;
}

export interface RoutingHookSource {
  listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]>;
}

export class HookCache implements RoutingHookSource {
  private readonly hooksById = new Map<string, HookEntry>();
  /** One read in flight per hook: attempts that miss together share it. */
  private readonly reading = new Map<string, Promise<HookRecord | null>>();
  /** Counts this process's hook writes: a hook read that one overtook does not fill the cache. */
  private hookWrites = 0;
  /** tenant → party key ("" for environment-only) → list. */
  private readonly lists = new Map<string, Map<string, ListEntry>>();
  private listCount = 0;
  /** Writes seen per tenant: a list read that a write overtook does not fill the cache. */
  private readonly tenantWrites = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly hooks: HookRepository,
    private readonly ttlMs: number = HOOK_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = onHookChange((tenantId, hookId) => {
      this.forgetHook(hookId);
      this.forgetTenant(tenantId);
    });
  }

  /** The hook within its tenant (null when absent there); from the cache only when the rules above allow it. */
  async get(tenantId: string, hookId: string, minRev?: number): Promise<HookRecord | null> {
    if (minRev !== undefined) {
      const entry = this.hooksById.get(hookId);
      if (
        entry &&
        entry.hook.tenantId === tenantId &&
        entry.hook.rev >= minRev &&
        this.now() - entry.readAt < this.ttlMs
      )
        return entry.hook;
      const pending = this.reading.get(hookId);
      if (pending) {
        const hook = await pending;
        if (hook && hook.tenantId === tenantId && hook.rev >= minRev) return hook;
      }
    }
    return this.readHook(tenantId, hookId);
  }

  /** The active hooks routing considers for a (tenant, party), as read in the last `ttlMs`. */
  async listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]> {
    const key = partyKey ?? '';
    const entry = this.lists.get(tenantId)?.get(key);
    if (entry && this.now() - entry.readAt < this.ttlMs) return entry.hooks;
    const readAt = this.now();
    const writes = this.tenantWrites.get(tenantId) ?? 0;
    const hooks = await this.hooks.listForRouting(tenantId, partyKey);
    if ((this.tenantWrites.get(tenantId) ?? 0) === writes) this.rememberList(tenantId, key, { hooks, readAt });
    return hooks;
  }

  forgetHook(hookId: string): void {
    this.hookWrites += 1;
    this.hooksById.delete(hookId);
    this.reading.delete(hookId);
  }

  forgetTenant(tenantId: string): void {
    this.tenantWrites.set(tenantId, (this.tenantWrites.get(tenantId) ?? 0) + 1);
    const lists = this.lists.get(tenantId);
    if (lists) {
      this.listCount -= lists.size;
      this.lists.delete(tenantId);
    }
  }

  close(): void {
    this.unsubscribe();
    this.hooksById.clear();
    this.reading.clear();
    this.lists.clear();
    this.listCount = 0;
  }

  private async readHook(tenantId: string, hookId: string): Promise<HookRecord | null> {
    const readAt = this.now();
    const writes = this.hookWrites;
    // By id in any tenant, so the cached entry serves any caller; the tenant is checked here, as the repository does.
    const promise = this.hooks.findInTenants([tenantId], hookId);
    this.reading.set(hookId, promise);
    let hook: HookRecord | null;
    try {
      hook = await promise;
    } finally {
      if (this.reading.get(hookId) === promise) this.reading.delete(hookId);
    }
    if (hook && writes === this.hookWrites) {
      const current = this.hooksById.get(hookId);
      if (!current || current.readAt <= readAt) this.rememberHook(hook, readAt);
    } else if (!hook) this.hooksById.delete(hookId);
    return hook;
  }

  private rememberHook(hook: HookRecord, readAt: number): void {
    this.hooksById.delete(hook.id);
    if (this.hooksById.size >= MAX_ENTRIES) {
      const oldest = this.hooksById.keys().next();
      if (!oldest.done) this.hooksById.delete(oldest.value);
    }
    this.hooksById.set(hook.id, { hook, readAt });
  }

  private rememberList(tenantId: string, key: string, entry: ListEntry): void {
    if (this.listCount >= MAX_ENTRIES) {
      // Whole tenants go, oldest inserted first: simple, and a full cache is rare.
      const oldest = this.lists.keys().next();
      if (!oldest.done) this.forgetTenant(oldest.value);
    }
    let lists = this.lists.get(tenantId);
    if (!lists) {
      lists = new Map();
      this.lists.set(tenantId, lists);
    }
    if (!lists.has(key)) this.listCount += 1;
    lists.set(key, entry);
  }
}
