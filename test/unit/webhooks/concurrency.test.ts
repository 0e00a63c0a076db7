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
    const waiters = Array.from({ length: MAX_WAITERS }, (_, i) =>
      c.acquire('h', 5_000).then((r) => (order.push(`w${i}`), r)),
    );
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

  it('gives up, rather than hands on, the slots a hook holds above a cap that timeouts narrowed', async () => {
    const c = new HookConcurrency(4);
    const held = [c.tryAcquire('h')!, c.tryAcquire('h')!, c.tryAcquire('h')!, c.tryAcquire('h')!];
    const waiting = c.acquire('h', 10_000);
    c.recordOutcome('h', true);
    c.recordOutcome('h', true);
    expect(c.capOf('h')).toBe(1);
    // Four in flight over a cap of one: the first three releases free their slots for good, the waiter keeps waiting.
    for (const release of held.slice(0, 3)) release();
    expect(c.current('h')).toBe(1);
    let granted: (() => void) | null | undefined;
    void waiting.then((r) => (granted = r));
    await Promise.resolve();
    expect(granted).toBeUndefined();
    // The last one, within the cap, goes to the waiter.
    held[3]!();
    expect(await waiting).not.toBeNull();
    expect(c.current('h')).toBe(1);
  });

  it('calls a narrowed hook stuck for as long as its receiver has not answered, however often timeouts free its slot', () => {
    let now = 5_000_000;
    const c = new HookConcurrency(2, () => now);
    const first = c.tryAcquire('h')!;
    c.recordOutcome('h', true);
    first();
    // One attempt after another times out every 3 s: the slot turns over, the receiver stays silent.
    for (let k = 0; k < 4; k++) {
      const r = c.tryAcquire('h')!;
      now += 3_000;
      expect(c.stuckForMs('h')).toBe(3_000 * (k + 1));
      c.recordOutcome('h', true);
      r();
    }
    const r = c.tryAcquire('h')!;
    expect(c.isStuck('h')).toBe(true);
    // An answer is a sign of life: the clock starts again from it.
    c.recordOutcome('h', false);
    r();
    c.tryAcquire('h');
    c.tryAcquire('h');
    expect(c.capOf('h')).toBe(2);
    expect(c.stuckForMs('h')).toBe(0);
    // A receiver answering between its timeouts is never stuck while it answers.
    const c2 = new HookConcurrency(1, () => now);
    for (let k = 0; k < 5; k++) {
      const s = c2.tryAcquire('f')!;
      now += 1_000;
      c2.recordOutcome('f', k % 2 === 0);
      s();
    }
    c2.tryAcquire('f');
    expect(c2.stuckForMs('f')).toBeLessThan(STUCK_AFTER_MS);
  });

  it('refuses a nonsensical cap', () => {
    expect(() => new HookConcurrency(0)).toThrow(RangeError);
  });
});
