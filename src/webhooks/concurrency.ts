/**
 * Per-hook cap on attempts in flight in this process. A receiver that hangs holds at most `limit` connections and
 * activity slots; further attempts for it are refused at once (not queued), so they never occupy a slot other hooks'
 * deliveries need: the workflow waits and tries again. Counts are per worker process, so the cluster-wide cap is
 * limit × workers.
 */
export class HookConcurrency {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be an integer >= 1');
  }

  /** A release function, or null when the hook is at its cap. */
  tryAcquire(hookId: string): (() => void) | null {
    const n = this.inFlight.get(hookId) ?? 0;
    if (n >= this.limit) return null;
    this.inFlight.set(hookId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(hookId) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(hookId);
      else this.inFlight.set(hookId, left);
    };
  }

  current(hookId: string): number {
    return this.inFlight.get(hookId) ?? 0;
  }
}
