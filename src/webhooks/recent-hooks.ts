import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import { onHookChange } from '../storage/hooks/hook.repository';

/**
 * Hooks read in the last `ttlMs`, for first attempts: a burst of events to one hook reads it once per `ttlMs`
 * instead of once per delivery. An entry is used only when
 * - it was read less than `ttlMs` ago, and
 * - its `rev` is at least the one the publisher routed with (`minRev`): a change made before the event was published
 *   (a new URL or key, then a Ping) is always seen, whatever this cache holds;
 * - no write to the hook in this process came after it (writes here drop the entry at once).
 * So the only staleness left is a change made in another process after the event was published: for at most `ttlMs`
 * an attempt may still use the hook as it was (decisions.md "Hook reads of first attempts").
 * Callers without a `minRev` (retries, runs started before the field existed) always read the database.
 */

export const RECENT_HOOK_TTL_MS = 2_000;
/** Bounds memory when many hooks are busy at once; the oldest entries go first. */
const MAX_ENTRIES = 5_000;

interface Entry {
  hook: HookRecord;
  readAt: number;
}

export class RecentHooks {
  private readonly entries = new Map<string, Entry>();
  /** One read in flight per hook: attempts that miss together share it. */
  private readonly reading = new Map<string, Promise<HookRecord | null>>();
  private readonly unsubscribe: () => void;
  /** Counts this process's hook writes: a read that one overtook does not fill the cache. */
  private writes = 0;

  constructor(
    private readonly hooks: HookRepository,
    private readonly ttlMs: number = RECENT_HOOK_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = onHookChange((_tenantId, hookId) => this.forget(hookId));
  }

  /** The hook within its tenant (null when absent there); from the cache only when the rules above allow it. */
  async get(tenantId: string, hookId: string, minRev?: number): Promise<HookRecord | null> {
    if (minRev !== undefined) {
      const entry = this.entries.get(hookId);
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
    return this.read(tenantId, hookId);
  }

  forget(hookId: string): void {
    this.writes += 1;
    this.entries.delete(hookId);
    this.reading.delete(hookId);
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
    this.reading.clear();
  }

  private async read(tenantId: string, hookId: string): Promise<HookRecord | null> {
    const readAt = this.now();
    const writes = this.writes;
    // By id in any tenant, so the cached entry serves any caller; the tenant is checked here, as the repository does.
    const promise = this.hooks.findInTenants([tenantId], hookId);
    this.reading.set(hookId, promise);
    let hook: HookRecord | null;
    try {
      hook = await promise;
    } finally {
      if (this.reading.get(hookId) === promise) this.reading.delete(hookId);
    }
    if (hook && writes === this.writes) {
      const current = this.entries.get(hookId);
      if (!current || current.readAt <= readAt) this.remember(hook, readAt);
    } else if (!hook) this.entries.delete(hookId);
    return hook;
  }

  private remember(hook: HookRecord, readAt: number): void {
    this.entries.delete(hook.id);
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(hook.id, { hook, readAt });
  }
}
