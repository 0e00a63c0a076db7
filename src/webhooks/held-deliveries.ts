import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliverWebhookInput, HoldDeliveryInput } from '../core/webhook-delivery';
import type { ClaimedDelivery, HeldDeliveryDoc } from '../storage/events/held-delivery.repository';
import type { DeliveryMeta } from './publish';
import type { WakeDelivery } from './parked-deliveries';

/**
 * Deliveries of a stuck hook held in the database with no run open. A run open per waiting delivery, even one idle
 * on a timer, made the engine slower for every other hook (benchmark run 35, docs/benchmarks.md); a held delivery
 * costs a record. The worker's triggers are ParkedDeliveries' (an answer releases a hook's deliveries, a timeout the
 * newest one); a release claims the record, starts the delivery's next run under the same workflow id from the stored
 * input, and removes the record if nothing held or claimed it since. The sweep releases what falls due, the durable
 * fallback for a release lost to a restart: that costs the delivery time, never the delivery.
 */

export interface HeldStore {
  hold(doc: Omit<HeldDeliveryDoc, 'seq'>): Promise<string>;
  claim(id: string, now: Date, leaseMs: number): Promise<ClaimedDelivery | null>;
  claimDue(now: Date, leaseMs: number, limit: number): Promise<ClaimedDelivery[]>;
  removeIfUnchanged(id: string, seq: string): Promise<boolean>;
}

/** Starts a delivery's next run (the earlier one has ended), after `startDelayMs`. */
export type RestartDelivery = (input: DeliverWebhookInput, meta: DeliveryMeta, startDelayMs: number) => Promise<'started' | 'already-started' | 'running'>;

/** What a release asks the engine about a delivery's runs. */
export interface DeliveryRuns {
  /** Signals a run that may still be open (it parked and has not held yet). */
  signal(workflowId: string, withinMs: number): Promise<void>;
  /** The latest run under the id; undefined when there is none. */
  latestRunId(workflowId: string): Promise<string | undefined>;
}

/**
 * How long a claim keeps others off a record. A releaser that claimed and then failed (the engine away) leaves it to
 * the sweep after this; a record whose run had not yet ended when it was released comes back after it too.
 */
export const CLAIM_LEASE_MS = 60_000;
/** Pauses before starting again while the run that held the delivery has not ended yet (about 3 s in all). */
const STILL_RUNNING_PAUSES_MS = [50, 100, 200, 400, 800, 1600];
/** Records one sweep releases at most; the next sweep takes the rest. */
export const SWEEP_BATCH = 200;

/** `superseded`: a run started after the hold (a redelivery, or a release whose removal failed) made it stale. */
export type ReleaseResult = 'started' | 'superseded' | 'still-running';

export class HeldDeliveries {
  constructor(
    private readonly store: HeldStore,
    private readonly restart: RestartDelivery,
    private readonly runs: DeliveryRuns,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** The held-delivery activity: writes the run's input and progress; the run ends after it. Resolves the record's seq. */
  async hold(h: HoldDeliveryInput, meta: DeliveryMeta): Promise<string> {
    const now = this.now();
    return this.store.hold({
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
  }

  /** A run woken while holding takes its record back; false when a release claimed it first. */
  unhold(workflowId: string, seq: string): Promise<boolean> {
    return this.store.removeIfUnchanged(workflowId, seq);
  }

  /**
   * ParkedDeliveries' wake: the held delivery's next run starts at a random point within `withinMs`; a delivery not
   * held (yet) is signalled, as its run is still open and will try again instead of holding.
   */
  readonly wake: WakeDelivery = async (workflowId, withinMs) => {
    const delay = Math.round(this.random() * Math.max(0, withinMs));
    const claimed = await this.store.claim(workflowId, new Date(this.now()), CLAIM_LEASE_MS);
    if (claimed) {
      await this.release(claimed, delay);
      return;
    }
    try {
      await this.runs.signal(workflowId, withinMs);
    } catch (e) {
      // The run held the delivery and ended between the claim and the signal: release the record after all.
      const late = await this.store.claim(workflowId, new Date(this.now()), CLAIM_LEASE_MS);
      if (!late) throw e;
      await this.release(late, delay);
    }
  };

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

  /**
   * Starts the next run of a claimed record and removes it. A run still open under the id (the one that held it, about
   * to end) keeps the record: the claim's lease brings it back to the sweep once that run has ended.
   */
  private async release(c: ClaimedDelivery, startDelayMs: number): Promise<ReleaseResult> {
    // A run started since the hold has taken the delivery over (it holds again itself if the hook is still stuck):
    // starting one more would send the event again.
    const latest = await this.runs.latestRunId(c._id);
    if (latest !== undefined && latest !== c.heldByRunId) {
      await this.store.removeIfUnchanged(c._id, c.seq);
      return 'superseded';
    }
    const input = JSON.parse(c.input) as DeliverWebhookInput;
    const meta = { topic: c.topic, partyKey: c.partyKey };
    // The run that held it ends one workflow task after the hold; a release that came sooner tries again shortly.
    for (let tried = 0; ; tried += 1) {
      if ((await this.restart(input, meta, startDelayMs)) !== 'running') {
        await this.store.removeIfUnchanged(c._id, c.seq);
        return 'started';
      }
      const pause: number | undefined = STILL_RUNNING_PAUSES_MS[tried];
      if (pause === undefined) return 'still-running';
      await sleep(pause);
    }
  }

  /** Sweeps every `everyMs` (from the end of the last sweep) until stopped; a failed sweep is reported, the next tries again. */
  startSweeping(everyMs: number, onError: (e: unknown) => void): { stop(): Promise<void> } {
    let stopped = false;
    let current: Promise<void> = Promise.resolve();
    let timer: ReturnType<typeof setTimeout>;
    const schedule = () => {
      timer = setTimeout(() => {
        current = this.releaseDue().then(
          () => undefined,
          (e: unknown) => onError(e),
        );
        void current.then(() => {
          if (!stopped) schedule();
        });
      }, everyMs);
      timer.unref();
    };
    schedule();
    return {
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await current;
      },
    };
  }
}
