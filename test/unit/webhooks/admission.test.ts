import { WEBHOOK_RETRY_SCHEDULE } from '../../../src/core/retry-schedule';
import { heldDueMs, stuckRetryMs, throttleBoundMs, throttleWaitMs } from '../../../src/webhooks/admission';

const DAY = 24 * 3600_000;

describe('throttle waits', () => {
  it('start short and double up to 30 s, or take the stuck hook’s wait, with jitter in the upper half', () => {
    expect(throttleWaitMs(1, undefined, 0)).toBe(50);
    expect(throttleWaitMs(1, undefined, 1)).toBe(100);
    expect(throttleWaitMs(4, undefined, 1)).toBe(800);
    expect(throttleWaitMs(30, undefined, 1)).toBe(30_000);
    expect(throttleWaitMs(1, 15 * 60_000, 0)).toBe(7.5 * 60_000);
  });

  it('are bounded by the retry window, never less than a day', () => {
    expect(throttleBoundMs(WEBHOOK_RETRY_SCHEDULE)).toBe(5 * DAY);
    expect(throttleBoundMs({ kind: 'table', delaysMs: [1000, 2000] })).toBe(DAY);
  });

  it('of a stuck hook follow how long it has been stuck: 30 s to 10 min for a run, 15 min to 1 h held', () => {
    expect([stuckRetryMs(1_000), stuckRetryMs(120_000), stuckRetryMs(DAY)]).toEqual([30_000, 120_000, 600_000]);
    expect([heldDueMs(1_000), heldDueMs(20 * 60_000), heldDueMs(DAY)]).toEqual([900_000, 1_200_000, 3_600_000]);
  });
});
