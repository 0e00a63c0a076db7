import { timeSkippingEnvironment } from '../support/time-skipping';

/*
 * The workflow branch tests lean on the time-skipping server: a retry schedule of days must pass in seconds. This
 * checks the server the cache provides does skip time, so a branch test cannot pass by waiting out a short schedule.
 */
describe('time-skipping test server', () => {
  const env = timeSkippingEnvironment();

  it('skips a week of server time in a few real seconds', async () => {
    expect(env().supportsTimeSkipping).toBe(true);
    const before = await env().currentTimeMs();
    const wallStart = Date.now();
    await env().sleep('7 days');
    const skipped = (await env().currentTimeMs()) - before;
    expect(skipped).toBeGreaterThanOrEqual(7 * 24 * 3_600_000);
    expect(Date.now() - wallStart).toBeLessThan(30_000);
  });
});
