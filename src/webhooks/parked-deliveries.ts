/**
 * Deliveries waiting on a stuck hook (its receiver hangs), per worker process: the workflow ids of the runs that found
 * it stuck. Those runs hold their delivery in the database and end (HeldDeliveries); the first answer the hook gives
 * in this process releases them all, and each timeout the newest one, through `wakeDelivery` (start the next run of a
 * held delivery, or signal a run that has not held yet). A release that goes missing (worker restarted, the engine
 * away) costs time only: the sweep releases every held delivery when it falls due.
 *
 * Per process, like the per-hook cap that decides what is stuck: a delivery parked through one worker is released by
 * that worker's view of the hook.
 */

/** Signals one parked run (by workflow id) that its hook answered; `withinMs`: spread of the returns. */
export type WakeDelivery = (workflowId: string, withinMs: number) => Promise<void>;

/** Parked deliveries remembered per hook; beyond that a delivery waits on its timer alone (the oldest are dropped). */
export const MAX_PARKED_PER_HOOK = 10_000;
/** Signals in flight at once while waking a hook's deliveries. */
export const WAKE_CONCURRENCY = 8;
/** Woken deliveries return spread over this much per delivery (at most MAX_WAKE_SPREAD_MS), not in one burst. */
export const WAKE_SPREAD_PER_DELIVERY_MS = 25;
export const MAX_WAKE_SPREAD_MS = 60_000;

/** The spread of `count` woken deliveries' returns. */
export function wakeSpreadMs(count: number): number {
  return Math.min(MAX_WAKE_SPREAD_MS, count * WAKE_SPREAD_PER_DELIVERY_MS);
}

/** Runs `fn` on every item, at most `lanes` at a time; resolves how many resolved true. */
export async function countInLanes<T>(
  items: readonly T[],
  lanes: number,
  fn: (item: T) => Promise<boolean>,
): Promise<number> {
  let next = 0;
  let count = 0;
  const lane = async () => {
    while (next < items.length) if (await fn(items[next++]!)) count += 1;
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  return count;
}

export interface ParkedDeliveriesOptions {
  /** A failed wake; that delivery keeps its timer. */
  onWakeError?: (workflowId: string, error: unknown) => void;
  maxPerHook?: number;
  /**
   * After the hook's answer has woken those parked here: release whatever else is held for it (parked through another
   * worker, before a restart, or past the bound). Reports its own failures; resolves how many it released.
   */
  releaseHeld?: (hookId: string) => Promise<number>;
  /** Whether deliveries are known to be held for the hook (through any worker): its answer then releases them. */
  heldFor?: (hookId: string) => boolean;
}

export class ParkedDeliveries {
  /** hook id → workflow ids, in the order they parked (a Set keeps insertion order). */
  private readonly byHook = new Map<string, Set<string>>();
  private readonly onWakeError: (workflowId: string, error: unknown) => void;
  private readonly maxPerHook: number;

  constructor(
    private readonly wakeDelivery: WakeDelivery,
    private readonly options: ParkedDeliveriesOptions = {},
  ) {
    this.onWakeError = options.onWakeError ?? (() => undefined);
    this.maxPerHook = options.maxPerHook ?? MAX_PARKED_PER_HOOK;
  }

  /** Remembers a delivery waiting on its stuck hook. */
  park(hookId: string, workflowId: string): void {
    const set = this.byHook.get(hookId) ?? new Set<string>();
    set.delete(workflowId);
    set.add(workflowId);
    // Full: forget the oldest; it comes back on its own timer.
    if (set.size > this.maxPerHook) set.delete(set.values().next().value as string);
    this.byHook.set(hookId, set);
  }

  /** A delivery that got a slot is no longer waiting. */
  unpark(hookId: string, workflowId: string): void {
    const set = this.byHook.get(hookId);
    if (!set?.delete(workflowId)) return;
    if (set.size === 0) this.byHook.delete(hookId);
  }

  count(hookId: string): number {
    return this.byHook.get(hookId)?.size ?? 0;
  }

  /** Whether anything waits on the hook: parked here, or held for it through any worker. */
  waiting(hookId: string): boolean {
    return this.byHook.has(hookId) || (this.options.heldFor?.(hookId) ?? false);
  }

  /**
   * An attempt on the stuck hook timed out and freed its slot: wake the delivery parked last (likely a ping sent after
   * the receiver was fixed) to try next, so while deliveries wait on a hook one of them is always finding out whether
   * it is back, one attempt per timeout, whether or not new events arrive. False when none is parked here.
   */
  async wakeOne(hookId: string): Promise<boolean> {
    const set = this.byHook.get(hookId);
    if (!set) return false;
    const id = [...set].at(-1)!;
    this.unpark(hookId, id);
    return this.signal(id, 0);
  }

  /**
   * The hook answered: signal each delivery parked on it (WAKE_CONCURRENCY at a time) and forget them, then release
   * what else is held for it. Resolves with how many were woken; a failed signal (the run has ended, the server is
   * away) is reported to onWakeError and that delivery keeps its timer.
   */
  async wake(hookId: string): Promise<number> {
    if (!this.waiting(hookId)) return 0;
    const ids = [...(this.byHook.get(hookId) ?? [])];
    this.byHook.delete(hookId);
    const withinMs = wakeSpreadMs(ids.length);
    const woken = await countInLanes(ids, WAKE_CONCURRENCY, (id) => this.signal(id, withinMs));
    return woken + ((await this.options.releaseHeld?.(hookId)) ?? 0);
  }

  /** One wake; a failure goes to onWakeError (the delivery keeps its timer). */
  private async signal(workflowId: string, withinMs: number): Promise<boolean> {
    try {
      await this.wakeDelivery(workflowId, withinMs);
      return true;
    } catch (e) {
      this.onWakeError(workflowId, e);
      return false;
    }
  }
}
