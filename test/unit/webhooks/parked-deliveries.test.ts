import {
  MAX_WAKE_SPREAD_MS,
  ParkedDeliveries,
  WAKE_CONCURRENCY,
  WAKE_SPREAD_PER_DELIVERY_MS,
} from '../../../src/webhooks/parked-deliveries';

describe('ParkedDeliveries', () => {
  it('remembers runs per hook once each, forgets one that got a slot, and wakes only the hook that answered', async () => {
    const woken: Array<[string, number]> = [];
    const p = new ParkedDeliveries(async (id, within) => void woken.push([id, within]));
    p.park('h1', 'a');
    p.park('h1', 'b');
    p.park('h1', 'a');
    p.park('h2', 'c');
    p.unpark('h1', 'b');
    p.unpark('h1', 'not-parked');
    expect(p.count('h1')).toBe(1);
    await expect(p.wake('h1')).resolves.toBe(1);
    expect(woken).toEqual([['a', WAKE_SPREAD_PER_DELIVERY_MS]]);
    // Woken runs are forgotten: a second answer signals nobody again.
    await expect(p.wake('h1')).resolves.toBe(0);
    expect(p.count('h2')).toBe(1);
  });

  it("after waking those parked here, releases what else is held for the hook (only on an answer, not a timeout's probe)", async () => {
    const calls: string[] = [];
    const p = new ParkedDeliveries(async (id) => void calls.push(`wake ${id}`), {
      releaseHeld: async (hookId) => {
        calls.push(`release ${hookId}`);
        return 4;
      },
    });
    p.park('h1', 'a');
    p.park('h1', 'b');
    await expect(p.wakeOne('h1')).resolves.toBe(true);
    await expect(p.wake('h1')).resolves.toBe(1 + 4);
    expect(calls).toEqual(['wake b', 'wake a', 'release h1']);
    // Nothing parked here, none held: an answer does nothing. Held through another worker: it releases those.
    let heldElsewhere = false;
    const q = new ParkedDeliveries(async () => undefined, { heldFor: () => heldElsewhere, releaseHeld: async () => 2 });
    expect(q.waiting('h1')).toBe(false);
    await expect(q.wake('h1')).resolves.toBe(0);
    heldElsewhere = true;
    expect(q.waiting('h1')).toBe(true);
    await expect(q.wake('h1')).resolves.toBe(2);
  });

  it('wakes the delivery parked last, alone, after a timeout', async () => {
    const woken: Array<[string, number]> = [];
    const p = new ParkedDeliveries(async (id, within) => void woken.push([id, within]));
    await expect(p.wakeOne('h1')).resolves.toBe(false);
    for (const id of ['a', 'b', 'c']) p.park('h1', id);
    await expect(p.wakeOne('h1')).resolves.toBe(true);
    await expect(p.wakeOne('h1')).resolves.toBe(true);
    expect(woken).toEqual([
      ['c', 0],
      ['b', 0],
    ]);
    expect(p.count('h1')).toBe(1);
    const failing = new ParkedDeliveries(async () => Promise.reject(new Error('gone')), {
      onWakeError: (id) => woken.push([`failed ${id}`, -1]),
    });
    failing.park('h1', 'd');
    await expect(failing.wakeOne('h1')).resolves.toBe(false);
    expect(woken.at(-1)).toEqual(['failed d', -1]);
  });

  it('keeps at most its bound per hook, dropping the oldest (it still has its own timer)', async () => {
    const woken: string[] = [];
    const p = new ParkedDeliveries(async (id) => void woken.push(id), { maxPerHook: 3 });
    for (const id of ['a', 'b', 'c', 'd']) p.park('h1', id);
    // Parking again moves a run to the back of the line.
    p.park('h1', 'b');
    p.park('h1', 'e');
    expect(p.count('h1')).toBe(3);
    await p.wake('h1');
    expect(woken.sort()).toEqual(['b', 'd', 'e']);
  });

  it('signals a bounded number at a time, spreads the returns with the count, and reports failed signals', async () => {
    let inFlight = 0;
    let most = 0;
    const spreads = new Set<number>();
    const failed: string[] = [];
    const p = new ParkedDeliveries(
      async (id, within) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        spreads.add(within);
        await new Promise((r) => setTimeout(r, 1));
        inFlight -= 1;
        if (id.endsWith('7')) throw new Error('workflow not found');
      },
      { onWakeError: (id) => failed.push(id) },
    );
    const n = 5_000;
    for (let i = 0; i < n; i++) p.park('h1', `wf-${i}`);
    await expect(p.wake('h1')).resolves.toBe(n - n / 10);
    expect(most).toBe(WAKE_CONCURRENCY);
    expect(failed).toHaveLength(n / 10);
    // 5 000 × 25 ms would be 125 s: held to the cap.
    expect([...spreads]).toEqual([MAX_WAKE_SPREAD_MS]);
  });
});
