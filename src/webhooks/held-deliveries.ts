import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliverWebhookInput, HoldDeliveryInput } from '../../workflows/contracts/deliver-webhook';
import type { ClaimedDelivery, HeldDeliveryDoc } from '../storage/events/held-delivery.repository';
import type { DeliveryMeta } from './publish';

/**
 * Deliveries of a stuck hook held in the database with no run open: the one way a delivery waits for a stuck hook
 * (admission.ts decides when). A run open per waiting delivery, even one idle on a timer, made the engine slower for
 * every other hook (decisions.md "Waiting deliveries of a stuck hook"); a held delivery costs a record. The hook's
 * answers release them (all on an answer, the newest on a timeout); a release claims the record, starts the
 * delivery's next run under the same workflow id from the stored input, and removes the record if nothing held or
 * claimed it since. The sweep releases what falls due, the durable fallback for a release lost to a restart or seen by
 * another worker: that costs the delivery time, never the delivery.
 */

export type { HoldDeliveryInput } from '../../workflows/contracts/deliver-webhook';

/** Held deliveries one answer of a hook releases at most (SWEEP_BATCH a page); the sweep has the rest. */
export const MAX_RELEASED_PER_ANSWER = 10_000;
/** Starts in flight at once while releasing a hook's deliveries. */
export const RELEASE_CONCURRENCY = 8;
/** Released deliveries start spread over this much per delivery (at most MAX_RELEASE_SPREAD_MS), not in one burst. */
export const RELEASE_SPREAD_PER_DELIVERY_MS = 25;
export const MAX_RELEASE_SPREAD_MS = 60_000;

/** The spread of `count` released deliveries' starts. */
export function releaseSpreadMs(count: number): number {
  return Math.min(MAX_RELEASE_SPREAD_MS, count * RELEASE_SPREAD_PER_DELIVERY_MS);
}

/** Runs `fn` on every item, at most `lanes` at a time; resolves how many resolved true. */
async function countInLanes<T>(items: readonly T[], lanes: number, fn: (item: T) => Promise<boolean>): Promise<number> {
  let next = 0;
  let count = 0;
  const lane = async () => {
    while (next < items.length) if (await fn(items[next++]!)) count += 1;
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  return count;
}

export interface HeldStore {
  /** The record's seq; null when an earlier run's record is still being released (hold again later). */
  hold(doc: Omit<HeldDeliveryDoc, 'seq'>): Promise<string | null>;
  claim(id: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | null>;
  claimDue(now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]>;
  /** By the claim's holder: removes the record (unless held again since) and the claim. */
  remove(c: ClaimedDelivery): Promise<void>;
  unclaimedIdsForHook(hookId: string, now: Date, limit: number, order?: 'oldest' | 'newest'): Promise<string[]>;
  hookIdsWithHeld(): Promise<string[]>;
}

/** The search attributes of a held delivery's next run: its event's topic and party. */
function metaOf(input: DeliverWebhookInput): DeliveryMeta {
  return { topic: input.event.topic, partyKey: input.eventPartyKey ?? '' };
}

/** A hold that must wait: an earlier run's record of the delivery is still claimed by its release. */
export class HeldRecordBusyError extends Error {
  constructor(workflowId: string) {
    super(`an earlier record of ${workflowId} is still being released; holding again shortly`);
    this.name = 'HeldRecordBusyError';
  }
}

/** Starts a delivery's next run (the earlier one has ended), after `startDelayMs`. */
export type RestartDelivery = (
  input: DeliverWebhookInput,
  meta: DeliveryMeta,
  startDelayMs: number,
) => Promise<'started' | 'already-started' | 'running'>;

/** What a release asks the engine about a delivery's runs. */
export interface DeliveryRuns {
  /** The latest run under the id; undefined when there is none. */
  latestRunId(workflowId: string): Promise<string | undefined>;
}

/**
 * How long a claim keeps others off a record. A releaser that claimed and then failed (the engine away) leaves it to
 * the sweep after this; a record whose run had not ended by HOLDER_END_WAIT_MS comes back after it too.
 */
export const CLAIM_LEASE_MS = 60_000;
/**
 * How long a release waits for the run that held the delivery to end. It ends one workflow task after the hold, but a
 * busy worker can take seconds over that task, and giving up early cost the delivery the rest of the lease and a sweep
 * (up to two minutes). Well inside the lease, so no other release claims the record meanwhile.
 */
export const HOLDER_END_WAIT_MS = 40_000;
/**
 * What a release leaves of its lease unused: it starts a run only while at least this much of the lease is left, so a
 * release that stalled does not start one after its claim ended (when another release may have claimed the record).
 */
export const LEASE_MARGIN_MS = 10_000;
/** Pauses between starts while that run has not ended: doubling from the first, then at most the longest. */
const HOLDER_END_PAUSE_MS = { first: 50, max: 1000 };
/** Records one sweep releases at most; the next sweep takes the rest. */
export const SWEEP_BATCH = 200;

/** `superseded`: a run started after the hold (a redelivery, or a release whose removal failed) made it stale. */
export type ReleaseResult = 'started' | 'superseded' | 'still-running';

export interface HeldDeliveriesOptions {
  now?: () => number;
  random?: () => number;
  /** HOLDER_END_WAIT_MS unless given (tests). */
  holderEndWaitMs?: number;
}

export class HeldDeliveries {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly holderEndWaitMs: number;
  /** Hooks with deliveries held through any worker, as the last sweep found them plus this process's holds since. */
  private readonly hooksWithHeld = new Set<string>();

  constructor(
    private readonly store: HeldStore,
    private readonly restart: RestartDelivery,
    private readonly runs: DeliveryRuns,
    options: HeldDeliveriesOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.holderEndWaitMs = options.holderEndWaitMs ?? HOLDER_END_WAIT_MS;
  }

  /** Whether deliveries are known to be held for the hook: an answer of it is then worth a release (releaseHook). */
  hasHeld(hookId: string): boolean {
    return this.hooksWithHeld.has(hookId);
  }

  /** Reads which hooks have held deliveries (a worker started since they were held learns of them here). */
  async refreshHooks(): Promise<void> {
    const hooks = await this.store.hookIdsWithHeld();
    this.hooksWithHeld.clear();
    for (const h of hooks) this.hooksWithHeld.add(h);
  }

  /**
   * The held-delivery activity: writes the run's input and progress; the run ends after it. Resolves the record's
   * seq; throws HeldRecordBusyError while an earlier run's record is being released (the activity is tried again).
   */
  async hold(h: HoldDeliveryInput): Promise<string> {
    const seq = await this.tryHold(h);
    if (seq === undefined) throw new HeldRecordBusyError(h.workflowId);
    return seq;
  }

  /** hold, or undefined while an earlier run's record is being released (the attempt leaves it to the run's step). */
  async tryHold(h: HoldDeliveryInput): Promise<string | undefined> {
    const meta = metaOf(h.input);
    const now = this.now();
    this.hooksWithHeld.add(h.input.hookId);
    const seq = await this.store.hold({
      _id: h.workflowId,
      tenantId: h.input.tenantId,
      hookId: h.input.hookId,
      input: JSON.stringify(h.input),
      topic: meta.topic,
      partyKey: meta.partyKey,
      heldAt: new Date(now),
      heldByRunId: h.runId,
      dueAt: new Date(now + Math.max(0, h.dueInMs)),
    });
    return seq ?? undefined;
  }

  /**
   * The hook answered: release every delivery held for it (through any worker, before a restart too), their starts
   * spread (releaseSpreadMs), SWEEP_BATCH at a time. A record another
   * release has is left to it; a release that fails goes to `onError` (its record comes back after the lease).
   * Resolves how many next runs it started.
   */
  async releaseHook(hookId: string, onError: (workflowId: string, error: unknown) => void): Promise<number> {
    let started = 0;
    for (let page = 0; page * SWEEP_BATCH < MAX_RELEASED_PER_ANSWER; page += 1) {
      const ids = await this.store.unclaimedIdsForHook(hookId, new Date(this.now()), SWEEP_BATCH);
      const withinMs = releaseSpreadMs(ids.length);
      const released = await countInLanes(ids, RELEASE_CONCURRENCY, async (id) => {
        try {
          return (await this.claimAndRelease(id, this.startDelayWithin(withinMs))) === 'started';
        } catch (e) {
          onError(id, e);
          return false;
        }
      });
      started += released;
      if (ids.length < SWEEP_BATCH) {
        // All taken: answers of the hook stop looking (until it holds again, or a sweep finds some held elsewhere).
        this.hooksWithHeld.delete(hookId);
        break;
      }
      // A page that released nothing (taken meanwhile, or failing) ends it too: the sweep has the rest.
      if (released === 0) break;
    }
    return started;
  }

  /**
   * A timeout of the stuck hook freed its slot: release the delivery held last (likely a ping sent after the receiver
   * was fixed) to try it next. False when none is held unclaimed; a failed release goes to `onError`.
   */
  async releaseNewest(hookId: string, onError: (workflowId: string, error: unknown) => void): Promise<boolean> {
    const [id] = await this.store.unclaimedIdsForHook(hookId, new Date(this.now()), 1, 'newest');
    if (id === undefined) return false;
    try {
      return (await this.claimAndRelease(id, 0)) === 'started';
    } catch (e) {
      onError(id, e);
      return false;
    }
  }

  /**
   * Releases what is due (at most `limit`); resolves how many next runs it started. One that fails (the engine away)
   * does not stop the others; the first failure is thrown after them, and its record comes back after the lease.
   */
  async releaseDue(limit = SWEEP_BATCH): Promise<number> {
    const claimed = await this.store.claimDue(new Date(this.now()), CLAIM_LEASE_MS, limit);
    let started = 0;
    let failure: Error | undefined;
    for (const c of claimed) {
      try {
        if ((await this.release(c, 0)) === 'started') started += 1;
      } catch (e) {
        failure ??= e instanceof Error ? e : new Error(String(e));
      }
    }
    if (failure) throw failure;
    return started;
  }

  /** A random point within a release's spread, where a released delivery's next run starts. */
  private startDelayWithin(withinMs: number): number {
    return Math.round(this.random() * Math.max(0, withinMs));
  }

  /** Claims the record and releases it; null when none is held or another release has it. */
  private async claimAndRelease(workflowId: string, startDelayMs: number): Promise<ReleaseResult | null> {
    const claimed = await this.store.claim(workflowId, new Date(this.now()), CLAIM_LEASE_MS);
    return claimed ? this.release(claimed, startDelayMs) : null;
  }

  /**
   * Starts the next run of a claimed record and removes it. While the run that held it is still open (about to end),
   * it waits for it (HOLDER_END_WAIT_MS at most); one that outlasts that keeps the record, which the sweep takes up
   * once the claim's lease has passed.
   */
  private async release(c: ClaimedDelivery, startDelayMs: number): Promise<ReleaseResult> {
    if (await this.superseded(c)) return 'superseded';
    const input = JSON.parse(c.input) as DeliverWebhookInput;
    const meta: DeliveryMeta = { topic: c.topic, partyKey: c.partyKey };
    for (let waited = 0, pause = HOLDER_END_PAUSE_MS.first; ; pause = Math.min(pause * 2, HOLDER_END_PAUSE_MS.max)) {
      // Past its lease another release may claim the record: this one starts nothing then (the record stays).
      if (this.now() > c.claimUntil.getTime() - LEASE_MARGIN_MS) return 'still-running';
      if ((await this.restart(input, meta, startDelayMs)) !== 'running') {
        await this.store.remove(c);
        return 'started';
      }
      // The open run is the holder, still ending, unless one was started since (it has the delivery now).
      if (await this.superseded(c)) return 'superseded';
      if (waited + pause > this.holderEndWaitMs) return 'still-running';
      waited += pause;
      await sleep(pause);
    }
  }

  /**
   * A run started since the hold has taken the delivery over (it holds again itself if the hook is still stuck):
   * starting one more would send the event again, so the record goes instead.
   */
  private async superseded(c: ClaimedDelivery): Promise<boolean> {
    const latest = await this.runs.latestRunId(c._id);
    if (latest === undefined || latest === c.heldByRunId) return false;
    await this.store.remove(c);
    return true;
  }

  /**
   * Sweeps every `everyMs` (from the end of the last sweep) until stopped, each sweep also reading which hooks have
   * held deliveries (first at once: a worker that starts learns of those held before); a failed sweep is reported,
   * the next tries again.
   */
  startSweeping(everyMs: number, onError: (e: unknown) => void): { stop(): Promise<void> } {
    let stopped = false;
    let current: Promise<void> = Promise.resolve();
    let timer: ReturnType<typeof setTimeout>;
    const sweep = async () => {
      await this.releaseDue().catch(onError);
      await this.refreshHooks().catch(onError);
    };
    const schedule = (delayMs: number) => {
      timer = setTimeout(() => {
        current = sweep();
        void current.then(() => {
          if (!stopped) schedule(everyMs);
        });
      }, delayMs);
      timer.unref();
    };
    schedule(0);
    return {
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await current;
      },
    };
  }
}
