/**
 * Retry schedules as data (spec 3 and 8). A schedule is plain JSON so it can travel in a workflow's input and tests can
 * pass a tiny one (five attempts in two seconds) instead of five days. Pure and dependency-free: workflows import it.
 *
 * Attempt numbers are 1-based: `attempt` is the number of the attempt that just failed, and the delay returned is the
 * wait before attempt `attempt + 1`.
 */

/** A source of uniform numbers in [0, 1). Workflows pass their deterministic one; tests pass a constant. */
export type RandomSource = () => number;

/** Bounds applied to a receiver's `Retry-After`. */
export interface RetryAfterBounds {
  readonly minMs: number;
  readonly maxMs: number;
}

/** Exponential backoff with jitter, bounded by a total window. */
export interface ExponentialRetrySchedule {
  readonly kind: 'exponential';
  /** Wait after the first failure, and the floor of every jittered wait. */
  readonly initialDelayMs: number;
  /** Growth factor of the nominal wait per attempt (and the upper factor of decorrelated jitter). */
  readonly multiplier: number;
  /** Cap of a single wait. */
  readonly maxDelayMs: number;
  /** No attempt starts later than this after the first attempt started. */
  readonly totalWindowMs: number;
  /** Optional cap on attempts, the first one included. */
  readonly maxAttempts?: number;
  /**
   * `full`: uniform between `initialDelayMs` and the nominal wait. `decorrelated`: uniform between `initialDelayMs`
   * and `multiplier` × the previous wait, capped. `none`: the nominal wait.
   */
  readonly jitter: 'full' | 'decorrelated' | 'none';
  readonly retryAfter?: RetryAfterBounds;
}

/** A fixed table of waits: `delaysMs[i]` is the wait before attempt i + 2. */
export interface TableRetrySchedule {
  readonly kind: 'table';
  readonly delaysMs: readonly number[];
  readonly retryAfter?: RetryAfterBounds;
}

export type RetrySchedule = ExponentialRetrySchedule | TableRetrySchedule;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Webhook deliveries (spec 3: "exponential backoff for 5 days"). Nominal waits 5 s, 15 s, 45 s, 2.25 min, 6.75 min,
 * 20 min, 1 h, 3 h, 9 h, then 12 h; full jitter spreads retries of many events that failed together. That gives about
 * 19 attempts without jitter and about 30 on average with it. `maxAttempts` is only a safety net against a degenerate
 * random source (always 0 would mean a retry every 5 s for five days); a uniform source does not reach it.
 * `Retry-After` can postpone a retry by up to 12 h, never hasten it.
 */
export const WEBHOOK_RETRY_SCHEDULE: ExponentialRetrySchedule = {
  kind: 'exponential',
  initialDelayMs: 5 * SECOND,
  multiplier: 3,
  maxDelayMs: 12 * HOUR,
  totalWindowMs: 5 * DAY,
  maxAttempts: 60,
  jitter: 'full',
  retryAfter: { minMs: 1 * SECOND, maxMs: 12 * HOUR },
};

/**
 * Peppol sending of a document (spec 3 and 8: "at most 8 attempts over about 35 hours", 5xx only). Seven waits:
 * 10 min, 20 min, 30 min, 2 h, 6 h, 12 h, 14 h, so attempts start at 0, 10 min, 30 min, 1 h, 3 h, 9 h, 21 h and 35 h.
 * Short waits first because most AS4 5xx are brief outages of the receiving access point; the long tail covers a
 * receiver that is down overnight. No jitter: there are few such deliveries, and a fixed table is what the spec states.
 */
export const PEPPOL_SEND_SCHEDULE: TableRetrySchedule = {
  kind: 'table',
  delaysMs: [10 * MINUTE, 20 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR, 14 * HOUR],
};

/**
 * Waits between e-mail attempts of a sales invoice that the relay refused for now (4xx) or could not be reached:
 * 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h (9 attempts over about 28 h), close to what mail servers retry.
 */
export const EMAIL_SEND_SCHEDULE: TableRetrySchedule = {
  kind: 'table',
  delaysMs: [5 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 12 * HOUR],
};

function unit(random: RandomSource): number {
  const r = random();
  if (!Number.isFinite(r) || r < 0) return 0;
  return r >= 1 ? 1 - Number.EPSILON : r;
}

/** The un-jittered wait after attempt `attempt` failed. */
export function nominalDelay(schedule: ExponentialRetrySchedule, attempt: number): number {
  const n = Math.max(1, Math.floor(attempt));
  // Exponent bounded: beyond the cap the exact power does not matter and a huge one would overflow to Infinity.
  const raw = schedule.initialDelayMs * Math.pow(schedule.multiplier, Math.min(n - 1, 1000));
  return Math.min(schedule.maxDelayMs, Number.isFinite(raw) ? raw : schedule.maxDelayMs);
}

function exponentialDelay(
  s: ExponentialRetrySchedule,
  attempt: number,
  random: RandomSource,
  previousDelayMs: number | undefined,
): number {
  switch (s.jitter) {
    case 'none':
      return nominalDelay(s, attempt);
    case 'full': {
      const top = nominalDelay(s, attempt);
      return s.initialDelayMs + unit(random) * (top - s.initialDelayMs);
    }
    case 'decorrelated': {
      const prev = previousDelayMs ?? (attempt <= 1 ? s.initialDelayMs : nominalDelay(s, attempt - 1));
      const top = Math.min(s.maxDelayMs, Math.max(s.initialDelayMs, prev * s.multiplier));
      return s.initialDelayMs + unit(random) * (top - s.initialDelayMs);
    }
  }
}

/**
 * Wait in ms before the next attempt, or null when the schedule is exhausted.
 * - `attempt`: the attempt that just failed (1 = the first).
 * - `elapsedMs`: time since the first attempt started; bounds an exponential schedule's window.
 * - `retryAfterMs`: the receiver's `Retry-After` (see `parseRetryAfter`); clamped to the schedule's bounds and only
 *   ever lengthens the wait, so a receiver cannot make us hammer it (or flood HookSentRetry events).
 * - `random`: jitter source. `previousDelayMs`: the last wait, for decorrelated jitter (derived when absent).
 * Near the end of the window the wait is shortened so the last attempt happens at the window's end, unless that would
 * bring it closer than `initialDelayMs` to the attempt that just failed.
 */
export function nextDelay(
  schedule: RetrySchedule,
  attempt: number,
  elapsedMs: number,
  retryAfterMs: number | null | undefined,
  random: RandomSource,
  previousDelayMs?: number,
): number | null {
  let delay: number;
  if (schedule.kind === 'table') {
    const d = schedule.delaysMs[Math.floor(attempt) - 1];
    if (d === undefined || attempt < 1) return null;
    delay = d;
  } else {
    if (schedule.maxAttempts !== undefined && attempt >= schedule.maxAttempts) return null;
    delay = exponentialDelay(schedule, attempt, random, previousDelayMs);
  }

  if (schedule.retryAfter && typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs)) {
    const { minMs, maxMs } = schedule.retryAfter;
    delay = Math.max(delay, Math.min(maxMs, Math.max(minMs, retryAfterMs)));
  }

  if (schedule.kind === 'exponential') {
    const remaining = schedule.totalWindowMs - Math.max(0, elapsedMs);
    if (remaining < schedule.initialDelayMs) return null;
    delay = Math.min(delay, remaining);
  }
  return Math.round(delay);
}

/**
 * The waits a schedule produces when every attempt fails instantly and no `Retry-After` is sent: documentation and
 * tests ("how many attempts, over how long").
 */
export function planRetryDelays(schedule: RetrySchedule, random: RandomSource): number[] {
  const out: number[] = [];
  let elapsed = 0;
  let previous: number | undefined;
  for (let attempt = 1; attempt <= 100_000; attempt++) {
    const d = nextDelay(schedule, attempt, elapsed, undefined, random, previous);
    if (d === null) break;
    out.push(d);
    elapsed += d;
    previous = d;
  }
  return out;
}

/**
 * `Retry-After` (RFC 9110 10.2.3: delta-seconds or an HTTP-date) → ms from `nowMs`, or undefined when absent or
 * unreadable. A date in the past gives 0.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim();
  if (v.length === 0) return undefined;
  if (/^\d+$/.test(v)) {
    const seconds = Number(v);
    return Number.isSafeInteger(seconds) ? seconds * SECOND : undefined;
  }
  // All three HTTP-date forms start with a day name; Date.parse alone would read "-5" or "1.5" as years.
  if (v.length > 64 || !/^[A-Za-z]{3,9},? /.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

const isNonNegative = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** Checks a schedule read from config or a workflow input. Returns null when valid, else what is wrong. */
export function validateRetrySchedule(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return 'schedule must be an object';
  const s = value as Record<string, unknown>;
  if (s.retryAfter !== undefined) {
    const ra = s.retryAfter as Record<string, unknown> | null;
    if (
      typeof ra !== 'object' ||
      ra === null ||
      !isNonNegative(ra.minMs) ||
      !isNonNegative(ra.maxMs) ||
      ra.minMs > ra.maxMs
    ) {
      return 'retryAfter needs 0 <= minMs <= maxMs';
    }
  }
  if (s.kind === 'table') {
    if (!Array.isArray(s.delaysMs) || !s.delaysMs.every(isNonNegative)) return 'delaysMs must be a list of waits >= 0';
    return null;
  }
  if (s.kind !== 'exponential') return 'kind must be "exponential" or "table"';
  if (!isNonNegative(s.initialDelayMs) || s.initialDelayMs === 0) return 'initialDelayMs must be > 0';
  if (typeof s.multiplier !== 'number' || !Number.isFinite(s.multiplier) || s.multiplier < 1)
    return 'multiplier must be >= 1';
  if (!isNonNegative(s.maxDelayMs) || s.maxDelayMs < s.initialDelayMs) return 'maxDelayMs must be >= initialDelayMs';
  if (!isNonNegative(s.totalWindowMs)) return 'totalWindowMs must be >= 0';
  if (s.maxAttempts !== undefined && !(Number.isInteger(s.maxAttempts) && (s.maxAttempts as number) >= 1)) {
    return 'maxAttempts must be an integer >= 1';
  }
  if (s.jitter !== 'full' && s.jitter !== 'decorrelated' && s.jitter !== 'none') {
    return 'jitter must be "full", "decorrelated" or "none"';
  }
  return null;
}
