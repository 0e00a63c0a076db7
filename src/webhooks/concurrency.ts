/**
 * Per-hook cap on attempts in flight in this process. A receiver that hangs holds at most `limit` connections, and
 * fewer once its attempts time out: each timeout halves the hook's allowance (down to one slot), each answer in time
 * gives one slot back (up to `limit`). So a receiver that hangs ends up holding one connection and one activity slot,
 * its attempts time out one at a time instead of `limit` at once, and one that recovers is back at full width after
 * `limit` answers.
 *
 * An attempt over the cap may wait a short while for a slot, but only MAX_WAITERS attempts per hook may wait; the
 * rest are refused at once, so a hung hook pins at most limit + MAX_WAITERS of the worker's activity slots and never
 * the slots other hooks' deliveries need. A refused attempt goes back to its workflow, which waits and tries again.
 * Counts are per worker process, so the cluster-wide cap is limit × workers.
 */

type Release = () => void;

/** Attempts per hook that may wait in the worker for a slot (smooths a burst without pinning many activity slots). */
export const MAX_WAITERS = 2;

/**
 * A hook at its cap with no slot freed for this long is stuck (a receiver that hangs until the timeout): its attempts
 * do not wait in the worker, and their workflows are told to come back much later instead of polling. For a hook
 * whose cap timeouts have narrowed, a slot freed by a timeout is no sign of life: it is stuck for as long as the
 * receiver has not answered (with a short timeout its one slot turns over every few seconds, yet the receiver has been
 * hanging all along), while one that answers between its timeouts is not.
 */
export const STUCK_AFTER_MS = 5_000;

interface Waiter {
  grant(release: Release | null): void;
  timer: ReturnType<typeof setTimeout>;
}

export class HookConcurrency {
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();
  /** When a slot of the hook was last taken from empty or given back: how fast its slots turn over. */
  private readonly turnover = new Map<string, number>();
  /** Slots a hook may use now, where timeouts took it below `limit`. */
  private readonly allowance = new Map<string, number>();
  /** For a hook whose cap is narrowed: its last answer, or the timeout that narrowed it if none came since. */
  private readonly silentSince = new Map<string, number>();

  constructor(
    readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be an integer >= 1');
  }

  /** The hook's cap now: `limit`, or less after timeouts. */
  capOf(hookId: string): number {
    return this.allowance.get(hookId) ?? this.limit;
  }

  /** An attempt that reached the receiver: a timeout halves the hook's cap (at least 1), an answer adds one back. */
  recordOutcome(hookId: string, timedOut: boolean): void {
    const cap = this.capOf(hookId);
    if (timedOut) {
      this.allowance.set(hookId, Math.max(1, Math.floor(cap / 2)));
      if (!this.silentSince.has(hookId)) this.silentSince.set(hookId, this.now());
    } else if (cap + 1 >= this.limit) {
      this.allowance.delete(hookId);
      this.silentSince.delete(hookId);
    } else {
      this.allowance.set(hookId, cap + 1);
      this.silentSince.set(hookId, this.now());
    }
  }

  /** A release function, or null when the hook is at its cap. */
  tryAcquire(hookId: string): Release | null {
    const n = this.inFlight.get(hookId) ?? 0;
    if (n >= this.capOf(hookId)) return null;
    if (n === 0) this.turnover.set(hookId, this.now());
    this.inFlight.set(hookId, n + 1);
    return this.releaser(hookId);
  }

  /**
   * How long the hook has been at its cap without a slot coming free, or, while timeouts have narrowed its cap,
   * without an answer; 0 when it is not at its cap.
   */
  stuckForMs(hookId: string): number {
    if ((this.inFlight.get(hookId) ?? 0) < this.capOf(hookId)) return 0;
    const now = this.now();
    const since = this.silentSince.get(hookId) ?? this.turnover.get(hookId) ?? now;
    return Math.max(0, now - since);
  }

  isStuck(hookId: string): boolean {
    return this.stuckForMs(hookId) >= STUCK_AFTER_MS;
  }

  /**
   * A slot now, or within `maxWaitMs` when one frees up (first come, first served); null when none did, or when
   * MAX_WAITERS attempts for this hook are already waiting.
   */
  acquire(hookId: string, maxWaitMs: number): Promise<Release | null> {
    const now = this.tryAcquire(hookId);
    if (now || maxWaitMs <= 0 || this.isStuck(hookId)) return Promise.resolve(now);
    const queue = this.waiting.get(hookId) ?? [];
    if (queue.length >= Math.min(this.capOf(hookId), MAX_WAITERS)) return Promise.resolve(null);
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
      this.turnover.set(hookId, this.now());
      // Hand the slot straight to the longest waiter, if any, the count staying as it is; not when timeouts have
      // narrowed the cap below the attempts in flight: the slot is then given up, or a hanging receiver would keep
      // every slot it held before the narrowing for as long as new attempts keep arriving.
      const held = this.inFlight.get(hookId) ?? 1;
      const queue = held <= this.capOf(hookId) ? this.waiting.get(hookId) : undefined;
      const next = queue?.shift();
      if (queue && queue.length === 0) this.waiting.delete(hookId);
      if (next) {
        clearTimeout(next.timer);
        next.grant(this.releaser(hookId));
        return;
      }
      const left = held - 1;
      if (left <= 0) {
        this.inFlight.delete(hookId);
        this.turnover.delete(hookId);
      } else this.inFlight.set(hookId, left);
    };
  }
}
