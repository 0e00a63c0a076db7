import {
  ExponentialRetrySchedule,
  PEPPOL_SEND_SCHEDULE,
  RetrySchedule,
  TableRetrySchedule,
  WEBHOOK_RETRY_SCHEDULE,
  nextDelay,
  nominalDelay,
  parseRetryAfter,
  planRetryDelays,
  validateRetrySchedule,
} from '../../../src/core/retry-schedule';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const zero = () => 0;
const half = () => 0.5;
const almostOne = () => 0.999999;

/** Deterministic uniform source (mulberry32) so the statistics below do not flake. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const tiny: ExponentialRetrySchedule = {
  kind: 'exponential',
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 800,
  totalWindowMs: 2000,
  maxAttempts: 5,
  jitter: 'none',
};

describe('exponential schedule', () => {
  it('a tiny schedule gives five attempts within two seconds', () => {
    const delays = planRetryDelays(tiny, zero);
    expect(delays).toEqual([100, 200, 400, 800]);
    expect(delays.length + 1).toBe(5);
    expect(delays.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2000);
  });

  it('survives a JSON round trip (it travels as workflow input)', () => {
    const copy = JSON.parse(JSON.stringify(WEBHOOK_RETRY_SCHEDULE)) as RetrySchedule;
    expect(copy).toEqual(WEBHOOK_RETRY_SCHEDULE);
    expect(planRetryDelays(copy, half)).toEqual(planRetryDelays(WEBHOOK_RETRY_SCHEDULE, half));
    expect(validateRetrySchedule(copy)).toBeNull();
  });

  it('grows by the multiplier up to the per-wait cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => nominalDelay(tiny, n))).toEqual([100, 200, 400, 800, 800, 800]);
    expect(nominalDelay(tiny, 10_000)).toBe(800);
    expect(nominalDelay({ ...tiny, multiplier: 1e308 }, 5)).toBe(800);
  });

  it('stops after maxAttempts', () => {
    expect(nextDelay(tiny, 4, 0, undefined, zero)).toBe(800);
    expect(nextDelay(tiny, 5, 0, undefined, zero)).toBeNull();
  });

  it('shortens the last wait so the last attempt lands at the end of the window', () => {
    const s = { ...tiny, maxAttempts: undefined, totalWindowMs: 1000 };
    expect(planRetryDelays(s, zero)).toEqual([100, 200, 400, 300]);
    expect(nextDelay(s, 4, 700, undefined, zero)).toBe(300);
  });

  it('gives up when the window is over, or too little of it is left for another attempt', () => {
    const s = { ...tiny, maxAttempts: undefined, totalWindowMs: 1000 };
    expect(nextDelay(s, 5, 1000, undefined, zero)).toBeNull();
    expect(nextDelay(s, 5, 5000, undefined, zero)).toBeNull();
    expect(nextDelay(s, 5, 950, undefined, zero)).toBeNull(); // 50 ms left < initialDelayMs
    expect(nextDelay(s, 5, 900, undefined, zero)).toBe(100);
  });

  it('full jitter stays between the initial wait and the nominal wait', () => {
    const s: ExponentialRetrySchedule = { ...tiny, jitter: 'full', maxAttempts: 100, totalWindowMs: 1e9 };
    expect(nextDelay(s, 4, 0, undefined, zero)).toBe(100);
    expect(nextDelay(s, 4, 0, undefined, half)).toBe(450);
    expect(nextDelay(s, 4, 0, undefined, almostOne)).toBe(800);
    const rnd = seeded(1);
    for (let attempt = 1; attempt < 50; attempt++) {
      const d = nextDelay(s, attempt, 0, undefined, rnd) as number;
      expect(d).toBeGreaterThanOrEqual(100);
      expect(d).toBeLessThanOrEqual(nominalDelay(s, attempt));
    }
  });

  it('decorrelated jitter draws between the initial wait and multiplier × the previous wait, capped', () => {
    const s: ExponentialRetrySchedule = { ...tiny, jitter: 'decorrelated', maxAttempts: 100, totalWindowMs: 1e9 };
    expect(nextDelay(s, 3, 0, undefined, almostOne, 300)).toBe(600);
    expect(nextDelay(s, 3, 0, undefined, zero, 300)).toBe(100);
    expect(nextDelay(s, 3, 0, undefined, almostOne, 700)).toBe(800);
    // Without the previous wait it falls back to the nominal one.
    expect(nextDelay(s, 3, 0, undefined, almostOne)).toBe(400);
    expect(nextDelay(s, 1, 0, undefined, almostOne)).toBe(200);
  });

  it('is deterministic for a deterministic random source', () => {
    expect(planRetryDelays(WEBHOOK_RETRY_SCHEDULE, seeded(7))).toEqual(
      planRetryDelays(WEBHOOK_RETRY_SCHEDULE, seeded(7)),
    );
  });

  it('tolerates a broken random source', () => {
    const s: ExponentialRetrySchedule = { ...tiny, jitter: 'full' };
    expect(nextDelay(s, 3, 0, undefined, () => NaN)).toBe(100);
    expect(nextDelay(s, 3, 0, undefined, () => -1)).toBe(100);
    expect(nextDelay(s, 3, 0, undefined, () => 7)).toBe(400);
  });
});

describe('Retry-After', () => {
  const s: ExponentialRetrySchedule = {
    ...tiny,
    maxAttempts: 100,
    totalWindowMs: 1e9,
    retryAfter: { minMs: 50, maxMs: 500 },
  };

  it('postpones the retry within the bounds', () => {
    expect(nextDelay(s, 1, 0, 300, zero)).toBe(300);
    expect(nextDelay(s, 1, 0, 10_000, zero)).toBe(500);
  });

  it('never hastens a retry', () => {
    expect(nextDelay(s, 3, 0, 0, zero)).toBe(400);
    expect(nextDelay(s, 3, 0, 200, zero)).toBe(400);
  });

  it('is ignored without bounds in the schedule, or when not a finite number', () => {
    expect(nextDelay(tiny, 1, 0, 10_000, zero)).toBe(100);
    expect(nextDelay(s, 1, 0, NaN, zero)).toBe(100);
    expect(nextDelay(s, 1, 0, null, zero)).toBe(100);
  });

  it('does not push an attempt past the window', () => {
    const w = { ...s, totalWindowMs: 1000 };
    expect(nextDelay(w, 2, 800, 500, zero)).toBe(200);
  });

  it('also applies to tables', () => {
    const t: TableRetrySchedule = { kind: 'table', delaysMs: [100, 100], retryAfter: { minMs: 0, maxMs: 1000 } };
    expect(nextDelay(t, 1, 0, 700, zero)).toBe(700);
    expect(nextDelay(t, 3, 0, 700, zero)).toBeNull();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });
  it('reads an HTTP-date', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:01:30 GMT', now)).toBe(90_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(0);
  });
  it.each([undefined, null, '', '-5', '1.5', 'soon', '9'.repeat(400), 'x'.repeat(100)])('ignores %j', (v) => {
    expect(parseRetryAfter(v as string | undefined, now)).toBeUndefined();
  });
});

describe('WEBHOOK_RETRY_SCHEDULE', () => {
  it('retries for five days', () => {
    const plain = planRetryDelays({ ...WEBHOOK_RETRY_SCHEDULE, jitter: 'none' }, zero);
    expect(plain.reduce((a, b) => a + b, 0)).toBe(5 * DAY);
    expect(plain.length + 1).toBe(19);
    expect(plain.slice(0, 4)).toEqual([5_000, 15_000, 45_000, 135_000]);
    expect(Math.max(...plain)).toBe(12 * HOUR);
  });

  it('with jitter still covers the window and stays well below the attempt safety net', () => {
    const rnd = seeded(42);
    let total = 0;
    for (let i = 0; i < 300; i++) {
      const delays = planRetryDelays(WEBHOOK_RETRY_SCHEDULE, rnd);
      expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThan(5 * DAY - 5_000);
      expect(delays.length + 1).toBeLessThan(WEBHOOK_RETRY_SCHEDULE.maxAttempts as number);
      total += delays.length + 1;
    }
    expect(total / 300).toBeGreaterThan(22);
    expect(total / 300).toBeLessThan(40);
  });

  it('the safety net holds against a degenerate random source', () => {
    expect(planRetryDelays(WEBHOOK_RETRY_SCHEDULE, zero)).toHaveLength(59);
  });
});

describe('PEPPOL_SEND_SCHEDULE', () => {
  it('makes at most 8 attempts over about 35 hours', () => {
    const delays = planRetryDelays(PEPPOL_SEND_SCHEDULE, zero);
    expect(delays.length + 1).toBe(8);
    expect(delays.reduce((a, b) => a + b, 0)).toBe(35 * HOUR);
    expect(nextDelay(PEPPOL_SEND_SCHEDULE, 8, 0, undefined, zero)).toBeNull();
    expect(nextDelay(PEPPOL_SEND_SCHEDULE, 0, 0, undefined, zero)).toBeNull();
    expect(nextDelay(PEPPOL_SEND_SCHEDULE, 1, 0, undefined, zero)).toBe(600_000);
  });

  it('ignores Retry-After (no bounds configured) and elapsed time', () => {
    expect(nextDelay(PEPPOL_SEND_SCHEDULE, 2, 40 * HOUR, 1, zero)).toBe(1_200_000);
  });
});

describe('validateRetrySchedule', () => {
  it('accepts the shipped schedules and the tiny one', () => {
    expect(validateRetrySchedule(WEBHOOK_RETRY_SCHEDULE)).toBeNull();
    expect(validateRetrySchedule(PEPPOL_SEND_SCHEDULE)).toBeNull();
    expect(validateRetrySchedule(tiny)).toBeNull();
  });

  it.each([
    [null, /object/],
    ['x', /object/],
    [{ kind: 'linear' }, /kind/],
    [{ ...tiny, initialDelayMs: 0 }, /initialDelayMs/],
    [{ ...tiny, multiplier: 0.5 }, /multiplier/],
    [{ ...tiny, maxDelayMs: 50 }, /maxDelayMs/],
    [{ ...tiny, totalWindowMs: -1 }, /totalWindowMs/],
    [{ ...tiny, maxAttempts: 1.5 }, /maxAttempts/],
    [{ ...tiny, jitter: 'equal' }, /jitter/],
    [{ ...tiny, retryAfter: { minMs: 10, maxMs: 5 } }, /retryAfter/],
    [{ kind: 'table', delaysMs: [1, -1] }, /delaysMs/],
    [{ kind: 'table' }, /delaysMs/],
  ])('refuses %j', (value, message) => {
    expect(validateRetrySchedule(value)).toMatch(message);
  });
});
