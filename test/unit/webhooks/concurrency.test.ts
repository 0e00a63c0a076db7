import { HookConcurrency, MAX_WAITERS, STUCK_AFTER_MS } from '../../../src/webhooks/concurrency';

describe('HookConcurrency', () => {
  it('caps each hook separately and frees slots once', () => {
    const c = new HookConcurrency(2);
    const a1 = c.tryAcquire('a');
    const a2 = c.tryAcquire('a');
    expect(a1 && a2).toBeTruthy();
    expect(c.tryAcquire('a')).toBeNull();
    expect(c.tryAcquire('b')).not.toBeNull();
    a1!();
    a1!();
    expect(c.current('a')).toBe(1);
    expect(c.tryAcquire('a')).not.toBeNull();
    expect(c.tryAcquire('a')).toBeNull();
  });

  it('hands a freed slot to a waiter, first come first served, and lets only a few wait', async () => {
    const c = new HookConcurrency(2);
    const held = [c.tryAcquire('h')!, c.tryAcquire('h')!];
    const order: string[] = [];
    const waiters = Array.from({ length: MAX_WAITERS }, (_, i) => c.acquire('h', 5_000).then((r) => (order.push(`w${i}`), r)));
    // One more than MAX_WAITERS is refused at once instead of waiting.
    expect(await c.acquire('h', 5_000)).toBeNull();
    held[0]!();
    const first = await waiters[0]!;
    expect(first).not.toBeNull();
    expect(c.current('h')).toBe(2);
    held[1]!();
    const second = await waiters[1]!;
    expect(order).toEqual(['w0', 'w1']);
    first!();
    second!();
    expect(c.current('h')).toBe(0);
  });

  it('gives up waiting after the given time', async () => {
    const c = new HookConcurrency(1);
    c.tryAcquire('h');
    const t0 = Date.now();
    expect(await c.acquire('h', 50)).toBeNull();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(await c.acquire('other', 0)).not.toBeNull();
  });

  it('calls a hook stuck when its slots stay full without turning over, and then lets nobody wait', async () => {
    let now = 1_000_000;
    const c = new HookConcurrency(2, () => now);
    const a = c.tryAcquire('h')!;
    c.tryAcquire('h');
    now += STUCK_AFTER_MS - 1;
    expect(c.isStuck('h')).toBe(false);
    // A slot turning over resets the clock: busy but moving is not stuck.
    a();
    c.tryAcquire('h');
    now += STUCK_AFTER_MS - 1;
    expect(c.isStuck('h')).toBe(false);
    now += 1;
    expect(c.isStuck('h')).toBe(true);
    expect(c.stuckForMs('h')).toBe(STUCK_AFTER_MS);
    // Stuck: no waiting in the worker, an immediate refusal.
    expect(await c.acquire('h', 60_000)).toBeNull();
    expect(c.isStuck('other')).toBe(false);
  });

  it('narrows a hook whose attempts time out to one slot, and widens it again one answer at a time', () => {
    const c = new HookConcurrency(20);
    const held = Array.from({ length: 20 }, () => c.tryAcquire('slow'));
    expect(held.every(Boolean)).toBe(true);
    // Twenty attempts time out together: 10, 5, 2, 1, then it stays at one.
    const caps: number[] = [];
    for (const release of held) {
      c.recordOutcome('slow', true);
      release!();
      caps.push(c.capOf('slow'));
    }
    expect(caps.slice(0, 5)).toEqual([10, 5, 2, 1, 1]);
    expect(caps.every((n) => n >= 1)).toBe(true);
    const one = c.tryAcquire('slow');
    expect(one).not.toBeNull();
    expect(c.tryAcquire('slow')).toBeNull();
    // The cap is what "stuck" is measured against: one hanging attempt is the hook at its cap.
    expect(c.stuckForMs('slow')).toBeGreaterThanOrEqual(0);
    one!();
    // Answers give slots back one at a time, up to the configured cap and no further.
    for (let k = 2; k <= 20; k++) {
      c.recordOutcome('slow', false);
      expect(c.capOf('slow')).toBe(k);
    }
    c.recordOutcome('slow', false);
    expect(c.capOf('slow')).toBe(20);
    // Other hooks never shared the narrowing.
    expect(c.capOf('other')).toBe(20);
  });

  it('lets at most the narrowed cap of attempts wait for a slot', async () => {
    const c = new HookConcurrency(4);
    c.recordOutcome('h', true);
    c.recordOutcome('h', true);
    c.recordOutcome('h', true);
    expect(c.capOf('h')).toBe(1);
    const held = c.tryAcquire('h');
    const waiting = c.acquire('h', 10_000);
    // One waiter at most for a cap of one; the next is refused at once.
    expect(await c.acquire('h', 10_000)).toBeNull();
    held!();
    const granted = await waiting;
    expect(granted).not.toBeNull();
    granted!();
  });

  it('refuses a nonsensical cap', () => {
    expect(() => new HookConcurrency(0)).toThrow(RangeError);
  });
});
