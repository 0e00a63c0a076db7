/**
 * Per-hook cap on attempts in flight in this process. A receiver that hangs holds at most `limit` connections. An
 * attempt over the cap may wait a short while for a slot, but only MAX_WAITERS attempts per hook may wait; the rest
 * are refused at once, so a hung hook pins at most limit + MAX_WAITERS of the worker's activity slots and never the
 * slots other hooks' deliveries need. A refused attempt goes back to its workflow, which waits and tries again. Counts are per
 * worker process, so the cluster-wide cap is limit × workers.
 */

type Release = () => void;

/** Attempts per hook that may wait in the worker for a slot (smooths a burst without pinning many activity slots). */
export const MAX_WAITERS = 2;

interface Waiter {
  grant(release: Release | null): void;
  timer: ReturnType<typeof setTimeout>;
}

export class HookConcurrency {
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be an integer >= 1');
  }

  /** A release function, or null when the hook is at its cap. */
  tryAcquire(hookId: string): Release | null {
    const n = this.inFlight.get(hookId) ?? 0;
    if (n >= this.limit) return null;
    this.inFlight.set(hookId, n + 1);
    return this.releaser(hookId);
  }

  /**
   * A slot now, or within `maxWaitMs` when one frees up (first come, first served); null when none did, or when
   * MAX_WAITERS attempts for this hook are already waiting.
   */
  acquire(hookId: string, maxWaitMs: number): Promise<Release | null> {
    const now = this.tryAcquire(hookId);
    if (now || maxWaitMs <= 0) return Promise.resolve(now);
    const queue = this.waiting.get(hookId) ?? [];
    if (queue.length >= Math.min(this.limit, MAX_WAITERS)) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          const q = this.waiting.get(hookId) ?? [];
          const i = q.indexOf(waiter);
          if (i >= 0) q.splice(i, 1);
          if (q.length === 0) this.waiting.delete(hookId);
          resolve(null);
        }, maxWaitMs),
      };
      queue.push(waiter);
      this.waiting.set(hookId, queue);
    });
  }

  current(hookId: string): number {
    return this.inFlight.get(hookId) ?? 0;
  }

  private releaser(hookId: string): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Hand the slot straight to the longest waiter, if any; the count stays as it is.
      const queue = this.waiting.get(hookId);
      const next = queue?.shift();
      if (queue && queue.length === 0) this.waiting.delete(hookId);
      if (next) {
        clearTimeout(next.timer);
        next.grant(this.releaser(hookId));
        return;
      }
      const left = (this.inFlight.get(hookId) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(hookId);
      else this.inFlight.set(hookId, left);
    };
  }
}
