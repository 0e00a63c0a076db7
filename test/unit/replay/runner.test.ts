import type { ReplayJournalDoc, ReplayRunState } from '../../../src/storage/replay/replay-journal.repository';
import type { Pacer } from '../../../src/replay/pacing';
import {
  planReplay,
  replayRunId,
  runReplay,
  type ActOutcome,
  type ReplayItem,
  type ReplayJournal,
  type ReplaySource,
} from '../../../src/replay/runner';

/** The journal's semantics (keyed inserts: a second insert of a key loses) over maps. */
class MemoryJournal implements ReplayJournal {
  readonly docs = new Map<string, ReplayJournalDoc>();
  state(runId: string): Promise<ReplayRunState> {
    const s: ReplayRunState = { claims: new Map(), done: new Map() };
    for (const d of this.docs.values()) {
      if (d.runId !== runId) continue;
      if (d.phase === 'done') s.done.set(d.itemKey, d);
      else if ((s.claims.get(d.itemKey)?.n ?? 0) < d.n) s.claims.set(d.itemKey, d);
    }
    return Promise.resolve(s);
  }
  claim(runId: string, itemKey: string, n: number, before: string | null): Promise<boolean> {
    const id = `${runId}|${itemKey}#claim${n}`;
    if (this.docs.has(id)) return Promise.resolve(false);
    this.docs.set(id, { _id: id, runId, itemKey, phase: 'claim', n, at: new Date(), before });
    return Promise.resolve(true);
  }
  done(runId: string, itemKey: string, outcome: string, detail: string | null): Promise<void> {
    const id = `${runId}|${itemKey}#done`;
    if (!this.docs.has(id))
      this.docs.set(id, { _id: id, runId, itemKey, phase: 'done', n: 0, at: new Date(), outcome, detail });
    return Promise.resolve();
  }
}

/** A receiver counting what it got, and a source that sends to it (the count is what a real receiver would see). */
class CountingSource implements ReplaySource {
  readonly kind = 'events';
  readonly selection = { hook: 'h1' };
  readonly received = new Map<string, number>();
  /** Send, then fail before answering (the send happened; the caller does not know). */
  failAfterSending = new Set<string>();
  constructor(private readonly keys: string[]) {}
  select(): Promise<ReplayItem[]> {
    return Promise.resolve(this.keys.map((key) => ({ key, tenantId: 't1', view: { eventId: key } })));
  }
  before(item: ReplayItem): Promise<string | null> {
    return Promise.resolve(String(this.received.get(item.key) ?? 0));
  }
  act(item: ReplayItem): Promise<ActOutcome> {
    this.received.set(item.key, (this.received.get(item.key) ?? 0) + 1);
    if (this.failAfterSending.delete(item.key)) return Promise.reject(new Error('connection lost'));
    return Promise.resolve({ outcome: 'sent' });
  }
  resolveInDoubt(item: ReplayItem, before: string | null): Promise<ActOutcome | null> {
    return Promise.resolve((this.received.get(item.key) ?? 0) > Number(before) ? { outcome: 'sent' } : null);
  }
}

const noPacing: Pacer = { wait: () => Promise.resolve() };
const keys = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'];

describe('bulk replay runs', () => {
  it('the dry run lists exactly the items the real run then acts on, and acts on nothing', async () => {
    const journal = new MemoryJournal();
    const source = new CountingSource(keys);
    await journal.done('run1', 'e2', 'sent', null); // done by an earlier run with this id
    const dry = await runReplay(source, journal, { runId: 'run1', dryRun: true, pacer: noPacing });
    expect(source.received.size).toBe(0);
    const listed = dry.items.filter((i) => i.action === 'would-act').map((i) => i.key);
    expect(listed).toEqual(['e1', 'e3', 'e4', 'e5', 'e6']);
    const real = await runReplay(source, journal, { runId: 'run1', dryRun: false, pacer: noPacing });
    const acted = real.items.filter((i) => i.action !== 'skip').map((i) => i.key);
    expect(acted).toEqual(listed);
    expect([...source.received.keys()]).toEqual(listed);
    expect(real).toMatchObject({ selected: 6, acted: 5, skipped: 1, failed: 0, stopped: false });
  });

  it('a run stopped half-way and started again sends every item exactly once', async () => {
    const journal = new MemoryJournal();
    const source = new CountingSource(keys);
    let crashed = false;
    // The process dies right after claiming e3, before sending it.
    const first = runReplay(source, journal, {
      runId: 'r',
      dryRun: false,
      pacer: noPacing,
      onProgress: (p) => {
        if (p.phase === 'claimed' && p.item.key === 'e3' && !crashed) {
          crashed = true;
          throw new Error('killed');
        }
      },
    });
    await expect(first).rejects.toThrow('killed');
    expect([...source.received.keys()]).toEqual(['e1', 'e2']);
    // The plan of the next run: e1, e2 done; e3 in doubt and not sent, so pending under claim 2.
    const plan = await planReplay(source, journal, 'r');
    expect(plan.map((p) => [p.item.key, p.status, p.claim])).toEqual([
      ['e1', 'done', 2],
      ['e2', 'done', 2],
      ['e3', 'pending', 2],
      ['e4', 'pending', 1],
      ['e5', 'pending', 1],
      ['e6', 'pending', 1],
    ]);
    const second = await runReplay(source, journal, { runId: 'r', dryRun: false, pacer: noPacing });
    expect(second).toMatchObject({ acted: 4, skipped: 2, failed: 0 });
    expect(keys.map((k) => source.received.get(k))).toEqual([1, 1, 1, 1, 1, 1]);
    const third = await runReplay(source, journal, { runId: 'r', dryRun: false, pacer: noPacing });
    expect(third).toMatchObject({ acted: 0, skipped: 6 });
    expect(keys.map((k) => source.received.get(k))).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('an item sent but not recorded (the action failed after sending) is not sent again', async () => {
    const journal = new MemoryJournal();
    const source = new CountingSource(['e1', 'e2']);
    source.failAfterSending.add('e1');
    const first = await runReplay(source, journal, { runId: 'r', dryRun: false, pacer: noPacing });
    expect(first).toMatchObject({ acted: 2, failed: 1 });
    expect(first.items[0]).toMatchObject({ key: 'e1', action: 'failed', detail: 'connection lost' });
    const dry = await runReplay(source, journal, { runId: 'r', dryRun: true, pacer: noPacing });
    expect(dry.items.map((i) => i.action)).toEqual(['skip', 'skip']);
    const second = await runReplay(source, journal, { runId: 'r', dryRun: false, pacer: noPacing });
    expect(second).toMatchObject({ acted: 0, skipped: 2 });
    expect(source.received.get('e1')).toBe(1);
    // Resolved once, then recorded: the journal says done.
    expect((await journal.state('r')).done.get('e1')?.outcome).toBe('sent');
  });

  it('--max and a stop request leave the rest for the next run', async () => {
    const journal = new MemoryJournal();
    const source = new CountingSource(keys);
    const first = await runReplay(source, journal, { runId: 'r', dryRun: false, pacer: noPacing, maxItems: 2 });
    expect(first).toMatchObject({ acted: 2, stopped: true, remaining: 4 });
    let n = 0;
    const second = await runReplay(source, journal, {
      runId: 'r',
      dryRun: false,
      pacer: noPacing,
      shouldStop: () => ++n > 3,
    });
    expect(second).toMatchObject({ acted: 3, skipped: 2, stopped: true, remaining: 1 });
    await runReplay(source, journal, { runId: 'r', dryRun: false, pacer: noPacing });
    expect(keys.map((k) => source.received.get(k))).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('an item another process with the same run id claimed is left to it', async () => {
    const journal = new MemoryJournal();
    const source = new CountingSource(['e1', 'e2']);
    const claimE2 = journal.claim.bind(journal);
    // The other process claims e2 between this run's plan and its claim.
    jest.spyOn(journal, 'claim').mockImplementation(async (runId, key, n, before) => {
      if (key === 'e2') await claimE2(runId, key, n, 'other');
      return claimE2(runId, key, n, before);
    });
    const report = await runReplay(source, journal, { runId: 'r', dryRun: false, pacer: noPacing });
    expect(report.items.map((i) => [i.key, i.action])).toEqual([
      ['e1', 'sent'],
      ['e2', 'skip'],
    ]);
    expect(source.received.has('e2')).toBe(false);
  });

  it('paces every action through the pacer', async () => {
    const journal = new MemoryJournal();
    const source = new CountingSource(keys);
    const wait = jest.fn(() => Promise.resolve());
    await runReplay(source, journal, { runId: 'r', dryRun: false, pacer: { wait } });
    expect(wait).toHaveBeenCalledTimes(6);
    await runReplay(source, journal, { runId: 'r', dryRun: true, pacer: { wait } });
    expect(wait).toHaveBeenCalledTimes(6);
  });

  it('derives the run id from the selection: the same selection continues, another starts afresh', () => {
    const a = replayRunId('events', { hook: 'h1', from: '2026-01-01T00:00:00.000Z' });
    expect(replayRunId('events', { from: '2026-01-01T00:00:00.000Z', hook: 'h1' })).toBe(a);
    expect(replayRunId('events', { hook: 'h2', from: '2026-01-01T00:00:00.000Z' })).not.toBe(a);
    expect(replayRunId('invoices', { hook: 'h1', from: '2026-01-01T00:00:00.000Z' })).not.toBe(a);
    expect(a).toMatch(/^events-[0-9a-f]{16}$/);
  });
});
