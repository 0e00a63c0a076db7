import { dropNumberedLeases, takeNumberedLease, type NumberedLease } from '../../../src/storage/lease';

/** A collection with the one property the claims rely on: an insert of an existing `_id` fails as a duplicate. */
class FakeCollection {
  readonly docs = new Map<string, NumberedLease & Record<string, unknown>>();
  inserts = 0;
  /** Runs after a failed insert, before the read that follows it (a holder finishing in between). */
  afterDuplicate?: () => void;
  async insertOne(doc: NumberedLease & Record<string, unknown>) {
    this.inserts += 1;
    if (this.docs.has(doc._id)) {
      this.afterDuplicate?.();
      throw Object.assign(new Error('E11000 duplicate key'), { code: 11000 });
    }
    this.docs.set(doc._id, { ...doc });
    return { acknowledged: true };
  }
  async findOne(filter: { _id: string }) {
    return this.docs.get(filter._id) ?? null;
  }
  async deleteMany(filter: { _id: { $in: string[] } }) {
    for (const id of filter._id.$in) this.docs.delete(id);
    return { deletedCount: filter._id.$in.length };
  }
}

const at = (ms: number) => new Date(ms);
const take = (c: FakeCollection, owner: string, now: number, until: number) =>
  takeNumberedLease(c as never, 'rec/seq', owner, at(now), at(until), { key: 'rec/seq' } as never);

describe('numbered leases', () => {
  it('gives number 1 to the first taker and nothing to others while its lease lasts', async () => {
    const c = new FakeCollection();
    await expect(take(c, 'a', 0, 1000)).resolves.toEqual({ id: 'rec/seq#1', n: 1, until: at(1000) });
    await expect(take(c, 'b', 500, 1500)).resolves.toBeNull();
    expect([...c.docs.keys()]).toEqual(['rec/seq#1']);
  });

  it('takes number n+1 only once number n has expired, one number after another', async () => {
    const c = new FakeCollection();
    await take(c, 'a', 0, 1000);
    await expect(take(c, 'b', 1000, 2000)).resolves.toMatchObject({ n: 2 });
    await expect(take(c, 'c', 1500, 2500)).resolves.toBeNull();
    await expect(take(c, 'c', 2001, 3000)).resolves.toMatchObject({ n: 3 });
    expect(c.docs.get('rec/seq#3')).toMatchObject({ owner: 'c', n: 3, key: 'rec/seq' });
  });

  it("returns a taker's own claim when it takes again (a retried step), never a second number", async () => {
    const c = new FakeCollection();
    await take(c, 'run', 0, 1000);
    await expect(take(c, 'run', 10, 20)).resolves.toEqual({ id: 'rec/seq#1', n: 1, until: at(1000) });
    // Expired too: still its own, not the next number.
    await expect(take(c, 'run', 5000, 6000)).resolves.toEqual({ id: 'rec/seq#1', n: 1, until: at(1000) });
    expect(c.docs.size).toBe(1);
  });

  it('tries the same number again when its holder removed it between the failed insert and the read', async () => {
    const c = new FakeCollection();
    await take(c, 'a', 0, 1000);
    c.afterDuplicate = () => {
      c.afterDuplicate = undefined;
      c.docs.delete('rec/seq#1');
    };
    await expect(take(c, 'b', 10, 1010)).resolves.toMatchObject({ n: 1 });
    expect(c.docs.get('rec/seq#1')?.owner).toBe('b');
  });

  it('drops leases 1..n of a key, leaving other keys', async () => {
    const c = new FakeCollection();
    await take(c, 'a', 0, 10);
    await take(c, 'b', 20, 30);
    c.docs.set('other#1', { _id: 'other#1', n: 1, owner: 'x', at: at(0), until: at(1) });
    await dropNumberedLeases(c as never, 'rec/seq', 2);
    expect([...c.docs.keys()]).toEqual(['other#1']);
  });
});
