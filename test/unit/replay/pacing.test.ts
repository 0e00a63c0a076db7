import { createPacer, parseRate } from '../../../src/replay/pacing';
import { parseWindow } from '../../../src/replay/sources';
import { parseOverlap } from '../../../src/webhooks/secret-rotation';

function fakeClock() {
  let now = 1_000_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    advance: (ms: number) => (now += ms),
    clock: {
      now: () => now,
      sleep: (ms: number) => {
        sleeps.push(ms);
        now += ms;
        return Promise.resolve();
      },
    },
  };
}

describe('replay pacing', () => {
  it('lets one action start every 1/rate seconds, the first at once', async () => {
    const c = fakeClock();
    const pacer = createPacer(4, c.clock);
    const starts: number[] = [];
    for (let i = 0; i < 5; i++) {
      await pacer.wait();
      starts.push(c.clock.now());
    }
    expect(starts.map((t) => t - starts[0]!)).toEqual([0, 250, 500, 750, 1000]);
  });

  it('a slow action uses up its interval and makes up nothing with a burst', async () => {
    const c = fakeClock();
    const pacer = createPacer(2, c.clock);
    await pacer.wait();
    c.advance(1_700); // the action took 1.7 s
    await pacer.wait();
    expect(c.sleeps).toEqual([]);
    await pacer.wait();
    expect(c.sleeps).toEqual([500]);
  });

  it('parses --rate and refuses nonsense', () => {
    expect(parseRate('5')).toBe(5);
    expect(parseRate('5/s')).toBe(5);
    expect(parseRate('0.5/s')).toBe(0.5);
    for (const bad of ['0', '-1', 'fast', '5/m', '1e3', '100000']) expect(() => parseRate(bad)).toThrow(/--rate/);
  });
});

describe('replay arguments', () => {
  it('reads a window and refuses bad dates', () => {
    expect(parseWindow('2026-05-01T00:00:00Z', '2026-05-02')).toEqual({
      from: new Date('2026-05-01T00:00:00Z'),
      to: new Date('2026-05-02T00:00:00Z'),
    });
    expect(parseWindow(undefined, undefined)).toEqual({ from: undefined, to: undefined });
    expect(() => parseWindow('yesterday', undefined)).toThrow(/--from must be an ISO 8601/);
    expect(() => parseWindow(undefined, '2026-13-45T00:00:00Z')).toThrow(/--to must be an ISO 8601/);
    expect(() => parseWindow('2026-05-01T10:00:00', undefined)).toThrow(/with a zone/);
    expect(() => parseWindow('2026-05-02T00:00:00Z', '2026-05-01T00:00:00Z')).toThrow(/--from must be before --to/);
  });

  it('reads an overlap and refuses nonsense', () => {
    expect(parseOverlap('24h')).toBe(86_400_000);
    expect(parseOverlap('30m')).toBe(1_800_000);
    expect(parseOverlap('90')).toBe(90_000);
    expect(parseOverlap('0')).toBe(0);
    for (const bad of ['1w', '-1h', '31d', 'soon']) expect(() => parseOverlap(bad)).toThrow(/--overlap/);
  });
});
