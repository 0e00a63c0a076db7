import type { AttemptOffer, AttemptResult } from '../../workflows/contracts/deliver-webhook';
import type { RetrySchedule } from '../core/retry-schedule';
import type { HookConcurrency } from './concurrency';
import type { GatewayEvent } from './event-payload';
import type { HeldDeliveries } from './held-deliveries';

/**
 * Admission: whether an attempt may go to its hook now, before anything is read or sent (dispatch.ts does that).
 *
 * - **The per-hook cap** (HookConcurrency): attempts in flight per hook in this worker; timeouts narrow it to one slot,
 *   answers widen it again. An attempt over the cap may wait SLOT_WAIT_MS for a slot.
 * - **Throttled**: no slot, and the hook is not stuck: the run tries again after a short wait (doubling, with jitter).
 * - **Held**: no slot, and the hook is stuck (its receiver hangs): the attempt writes the run's input and progress to
 *   the held deliveries (HeldDeliveries) and the run ends; its next run starts when the hook answers, when a timeout
 *   frees a slot (the newest one), or when it falls due (the sweep).
 * - **Overdue**: the delivery has waited for a slot longer than it may (throttleBoundMs): the run gives up.
 *
 * Admission also hears every attempt's outcome: a hook that answered (or turned out deleted or switched off) releases
 * what is held for it, a timeout the newest held delivery, so one of them is always finding out whether it is back.
 */

/** How long an attempt over the per-hook cap waits in the worker for a slot before handing back to its workflow. */
export const SLOT_WAIT_MS = 2_000;

/** Tries refused by the per-hook concurrency cap wait this long at first, doubling up to the cap, with jitter. */
const THROTTLE_FIRST_WAIT_MS = 100;
const THROTTLE_MAX_WAIT_MS = 30_000;

/**
 * How long a throttled try waits (or a held delivery stays held) after its `throttled`-th refusal in a row: the
 * stuck hook's `stuckWaitMs` when it gives one, else a short first wait doubling up to the cap; half of it plus a
 * random half.
 */
export function throttleWaitMs(throttled: number, stuckWaitMs: number | undefined, random: number): number {
  const top = Math.min(THROTTLE_MAX_WAIT_MS, THROTTLE_FIRST_WAIT_MS * 2 ** Math.min(throttled - 1, 20));
  const base = stuckWaitMs !== undefined ? Math.max(stuckWaitMs, top) : top;
  return Math.round(base / 2 + random * (base / 2));
}

/**
 * How long a delivery may wait for a free slot under the per-hook cap. Waiting there is back-pressure from the
 * gateway's own cap, not a failure of the receiver, so it is bounded only loosely: the retry window, and never less
 * than a day (a hook with a long backlog is slow, not broken).
 */
export function throttleBoundMs(schedule: RetrySchedule): number {
  const window =
    schedule.kind === 'exponential' ? schedule.totalWindowMs : schedule.delaysMs.reduce((a, b) => a + b, 0);
  return Math.max(window, 24 * 60 * 60 * 1000);
}

/**
 * When a hook's slots are stuck and its delivery cannot be held (no held store, or no run offered), the run comes back
 * after about as long as the hook has been stuck (at least 30 s, at most 10 min) rather than polling: the deliveries
 * waiting on it grow with time, their tries per second stay near the rate of new events for that hook.
 */
export function stuckRetryMs(stuckForMs: number): number {
  return Math.min(10 * 60_000, Math.max(30_000, stuckForMs));
}

/**
 * When a held delivery falls due if nothing releases it before: the hook's next answer releases it, and one held
 * delivery tries the hook after each timeout, so this is only the fallback for a release that never comes (worker
 * restarted, the answer seen by another worker): at least 15 min (nine default timeouts), up to an hour for a hook
 * stuck that long.
 */
export function heldDueMs(stuckForMs: number): number {
  return Math.min(60 * 60_000, Math.max(15 * 60_000, stuckForMs));
}

/** What the run offers with its attempt (AttemptOffer), with the run's ids from the activity's context. */
export interface AttemptRun extends AttemptOffer {
  /** The delivery's workflow id; its next run starts under the same id. */
  workflowId: string;
  /** The run making the attempt: a release finding a later run under the id knows the delivery was taken over. */
  runId: string;
}

/** An attempt admission turned away (nothing was read or sent): throttled, held, to be held by the run, overdue. */
export type AdmissionRefusal = Extract<AttemptResult, { kind: 'throttled' | 'held' | 'hold' | 'overdue' }>;

export interface AdmissionDeps {
  cap: HookConcurrency;
  /** Deliveries of stuck hooks held in the database; without it they wait on their runs' timers. */
  held?: HeldDeliveries;
  /** A release (after an answer or a timeout) that failed: that delivery waits until it falls due. */
  onReleaseError?: (workflowId: string, error: unknown) => void;
  now?: () => number;
  random?: () => number;
}

/** What admission needs to know of an attempt's outcome (dispatch's result). */
export type AttemptOutcome = { kind: 'sent' } | { kind: 'failed'; timedOut: boolean } | { kind: 'skipped' };

export class Admission {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly onReleaseError: (workflowId: string, error: unknown) => void;

  constructor(private readonly deps: AdmissionDeps) {
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
    this.onReleaseError = deps.onReleaseError ?? (() => undefined);
  }

  /** A slot (release it when the attempt is done), or why not. */
  async admit(
    hookId: string,
    event: GatewayEvent,
    run?: AttemptRun,
  ): Promise<{ kind: 'admitted'; release: () => void } | AdmissionRefusal> {
    const { cap, held } = this.deps;
    // The slot first: a hook at its cap costs no database reads, however often its deliveries come back to try.
    const release = await cap.acquire(hookId, SLOT_WAIT_MS);
    if (release) return { kind: 'admitted', release };
    const throttled = (run?.progress.throttled ?? 0) + 1;
    if (!cap.isStuck(hookId)) return this.wait(throttled, undefined, run);
    const stuckFor = cap.stuckForMs(hookId);
    if (!held || !run) return this.wait(throttled, stuckRetryMs(stuckFor), run);
    const dueInMs = throttleWaitMs(throttled, heldDueMs(stuckFor), this.random());
    if (this.overdue(dueInMs, run)) return { kind: 'overdue' };
    const seq = await held.tryHold({
      workflowId: run.workflowId,
      runId: run.runId,
      input: { ...run.input, event, resume: { ...run.progress, throttled } },
      dueInMs,
    });
    return seq === undefined ? { kind: 'hold', dueInMs } : { kind: 'held', seq };
  }

  /** Timeouts narrow the hook's cap, answers widen it again (HookConcurrency); refusals and resets leave it. */
  reached(hookId: string, timedOut: boolean): void {
    this.deps.cap.recordOutcome(hookId, timedOut);
  }

  /**
   * What an attempt means for the deliveries held for its hook (its slot already freed): any answer, even an error
   * status, means the receiver is back, and a hook deleted or switched off ends them all, so every one is released; a
   * timeout releases the newest, so one of them is always finding out whether the receiver is back.
   */
  settled(hookId: string, outcome: AttemptOutcome): void {
    const held = this.deps.held;
    if (!held?.hasHeld(hookId)) return;
    const report = (e: unknown) => this.onReleaseError(hookId, e);
    if (outcome.kind === 'sent' || outcome.kind === 'skipped')
      void held.releaseHook(hookId, this.onReleaseError).catch(report);
    else if (outcome.timedOut) void held.releaseNewest(hookId, this.onReleaseError).catch(report);
  }

  private wait(throttled: number, stuckWaitMs: number | undefined, run: AttemptRun | undefined): AdmissionRefusal {
    const waitMs = throttleWaitMs(throttled, stuckWaitMs, this.random());
    return run && this.overdue(waitMs, run) ? { kind: 'overdue' } : { kind: 'throttled', waitMs };
  }

  private overdue(waitMs: number, run: AttemptRun): boolean {
    return this.now() + waitMs - run.progress.startedAtMs > throttleBoundMs(run.input.schedule);
  }
}
