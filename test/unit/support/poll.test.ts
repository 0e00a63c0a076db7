import { eventually } from '../../support/poll';

describe('eventually', () => {
  it('returns the first answer that is neither undefined nor false, asking again in between', async () => {
    let calls = 0;
    const answer = await eventually(() => {
      calls += 1;
      if (calls === 1) return undefined;
      if (calls === 2) return false;
      return { calls };
    }, 5_000);
    expect(answer).toEqual({ calls: 3 });
    expect(calls).toBe(3);
  });

  it('keeps 0 and the empty string: only undefined and false mean "not yet"', async () => {
    await expect(eventually(() => 0, 1_000)).resolves.toBe(0);
    await expect(eventually(async () => '', 1_000)).resolves.toBe('');
  });

  it('fails at the deadline, naming what it waited for and what it saw last', async () => {
    let seen = 0;
    const started = Date.now();
    await expect(
      eventually(
        () => {
          seen += 1;
          return undefined;
        },
        200,
        () => `the answer (asked ${seen} times)`,
        20,
      ),
    ).rejects.toThrow(/^the answer \(asked \d+ times\) not reached within 200 ms$/);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(2_000);
    expect(seen).toBeGreaterThan(2);
  });

  it('fails at once when the check throws', async () => {
    let calls = 0;
    await expect(
      eventually(() => {
        calls += 1;
        throw new Error('broken');
      }, 5_000),
    ).rejects.toThrow('broken');
    expect(calls).toBe(1);
  });
});
