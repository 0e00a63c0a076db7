import { setTimeout as sleep } from 'node:timers/promises';

/** Spaces the actions of a replay: at most `ratePerSecond`, evenly (no bursts: a receiver sees a steady rate). */
export interface Pacer {
  /** Resolves when the next action may start. */
  wait(): Promise<void>;
}

export interface PacerClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const REAL_CLOCK: PacerClock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

/** Largest rate accepted (per second): above it the pacing is no longer what limits a replay. */
export const MAX_RATE_PER_SECOND = 1000;

/** `--rate`: a number of actions per second, optionally written `N/s` (`5`, `5/s`, `0.5/s`). */
export function parseRate(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(text.trim());
  const rate = m ? Number(m[1]) : NaN;
  if (!Number.isFinite(rate) || rate <= 0 || rate > MAX_RATE_PER_SECOND)
    throw new RangeError(
      `--rate must be a number of items per second above 0 and at most ${MAX_RATE_PER_SECOND}, like 5/s`,
    );
  return rate;
}

/**
 * A pacer letting one action start every 1/rate seconds: the first at once, each next one no sooner than the interval
 * after the previous start (a slow action uses up its interval; time lost is never made up with a burst).
 */
export function createPacer(ratePerSecond: number, clock: PacerClock = REAL_CLOCK): Pacer {
  const intervalMs = 1000 / ratePerSecond;
  let nextAt = -Infinity;
  return {
    async wait() {
      const now = clock.now();
      if (now < nextAt) await clock.sleep(nextAt - now);
      nextAt = Math.max(now, nextAt) + intervalMs;
    },
  };
}
