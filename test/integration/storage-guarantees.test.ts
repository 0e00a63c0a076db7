import { randomUUID } from 'node:crypto';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import { isDuplicateKeyError } from '../../src/storage/connection';
import { requireEnv, uniqueDbUri } from '../support/services';

/**
 * The database properties the gateway relies on, checked against the backend in use (the embedded FerretDB in
 * `npm test`, or the MongoDB that MONGODB_URI names). Every invariant in src/storage rests on these and on nothing
 * else: FerretDB 1.x gives no atomic single-document update and no compare-and-set through a conditional update, so
 * the gateway uses neither where two writers can meet ("Storage writes" in docs/decisions.md). A property added to
 * the code's assumptions gets its test here first.
 */

interface Keyed {
  _id: string;
  owner: string;
  group?: string;
  slot?: string;
}

const ROUNDS = 30;
const RACERS = 10;

describe('storage guarantees the gateway relies on', () => {
  let a: Connection;
  let b: Connection;
  let onA: Model<Keyed>;
  let onB: Model<Keyed>;

  beforeAll(async () => {
    const { mongodbUri } = requireEnv();
    const uri = uniqueDbUri(
      mongodbUri,
      `guarantees${randomUUID()
        .replace(/[^a-f]/g, '')
        .slice(0, 8)}`,
    );
    // Two connections, as an API process and a worker have.
    a = await mongoose.createConnection(uri, { autoIndex: false }).asPromise();
    b = await mongoose.createConnection(uri, { autoIndex: false }).asPromise();
    const schema = new Schema<Keyed>(
      { _id: String, owner: { type: String, required: true }, group: String, slot: String },
      { versionKey: false },
    );
    schema.index({ slot: 1 }, { unique: true, sparse: true });
    schema.index({ group: 1 });
    onA = a.model<Keyed>('Keyed', schema, 'keyed');
    onB = b.model<Keyed>('Keyed', schema, 'keyed');
    await onA.init();
    await onA.createIndexes();
  });

  afterAll(async () => {
    await a?.dropDatabase().catch(() => undefined);
    await a?.close();
    await b?.close();
  });

  /** Runs `RACERS` inserts of one key at once over both connections; returns how many succeeded. */
  async function race(doc: (owner: string) => Keyed): Promise<{ won: number; duplicates: number; other: unknown[] }> {
    const results = await Promise.allSettled(
      Array.from({ length: RACERS }, (_, i) => (i % 2 ? onA : onB).create(doc(`racer-${i}`))),
    );
    const rejected = results
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r): unknown => r.reason);
    return {
      won: results.filter((r) => r.status === 'fulfilled').length,
      duplicates: rejected.filter(isDuplicateKeyError).length,
      other: rejected.filter((e) => !isDuplicateKeyError(e)),
    };
  }

  it(`lets exactly one of ${RACERS} concurrent inserts with one _id succeed, ${ROUNDS} rounds of ${ROUNDS}`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = `id-${randomUUID()}`;
      const r = await race((owner) => ({ _id: id, owner }));
      expect(r.other).toEqual([]);
      expect([r.won, r.duplicates]).toEqual([1, RACERS - 1]);
      // The stored document is the winner's, whole.
      const stored = await onB.findById(id).lean<Keyed>().exec();
      expect(stored?.owner).toMatch(/^racer-\d+$/);
    }
  });

  it(`lets exactly one of ${RACERS} concurrent inserts with one unique secondary key succeed`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const slot = `slot-${randomUUID()}`;
      const r = await race((owner) => ({ _id: randomUUID(), owner, slot }));
      expect(r.other).toEqual([]);
      expect([r.won, r.duplicates]).toEqual([1, RACERS - 1]);
      expect(await onA.countDocuments({ slot }).exec()).toBe(1);
    }
  });

  it('shows a document inserted through one connection to a read through the other at once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = `seen-${randomUUID()}`;
      await onA.create({ _id: id, owner: 'api' });
      expect(await onB.findById(id).lean<Keyed>().exec()).toMatchObject({ _id: id, owner: 'api' });
    }
  });

  it('finds by an indexed field exactly the documents inserted with it, from either connection', async () => {
    const group = `group-${randomUUID()}`;
    const ids = Array.from({ length: 25 }, (_, i) => `${group}#${i}`);
    await Promise.all(ids.map((id, i) => (i % 2 ? onA : onB).create({ _id: id, owner: 'w', group })));
    await onA.create({ _id: `other-${randomUUID()}`, owner: 'w', group: `${group}-not` });
    const found = await onB.find({ group }).lean<Keyed[]>().exec();
    expect(found.map((d) => d._id).sort()).toEqual([...ids].sort());
  });

  it('removes a document by _id for every later read, whoever else removes it at once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = `gone-${randomUUID()}`;
      await onA.create({ _id: id, owner: 'x' });
      await Promise.all([onA.deleteOne({ _id: id }).exec(), onB.deleteOne({ _id: id }).exec()]);
      expect(await onA.findById(id).lean().exec()).toBeNull();
      expect(await onB.findById(id).lean().exec()).toBeNull();
    }
  });

  it('lets a key be inserted again once its document is removed (a lease after its expiry)', async () => {
    const id = `lease-${randomUUID()}`;
    await onA.create({ _id: id, owner: 'first' });
    await onB.deleteOne({ _id: id }).exec();
    const r = await race((owner) => ({ _id: id, owner }));
    expect([r.won, r.duplicates]).toEqual([1, RACERS - 1]);
  });
});
