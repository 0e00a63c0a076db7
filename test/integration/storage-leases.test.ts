import { randomUUID } from 'node:crypto';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import { buildLeaseModel, tryLease, withLease, type LeaseDoc } from '../../src/storage/lease';
import { requireEnv, uniqueDbUri } from '../support/services';

interface Counter {
  _id: string;
  count: number;
}

/** The lease of src/storage/lease.ts on the real database: its holders are exclusive, and an expired one passes on. */
describe('leases taken by numbered inserts', () => {
  const conns: Connection[] = [];
  const leases: Model<LeaseDoc>[] = [];
  const counters: Model<Counter>[] = [];

  beforeAll(async () => {
    const { mongodbUri } = requireEnv();
    const uri = uniqueDbUri(
      mongodbUri,
      `leases${randomUUID()
        .replace(/[^a-f]/g, '')
        .slice(0, 8)}`,
    );
    for (let i = 0; i < 2; i++) {
      const conn = await mongoose.createConnection(uri, { autoIndex: false }).asPromise();
      conns.push(conn);
      leases.push(buildLeaseModel(conn));
      counters.push(
        conn.model<Counter>(
          'Counter',
          new Schema<Counter>({ _id: String, count: Number }, { versionKey: false }),
          'counters',
        ),
      );
    }
    await leases[0]!.init();
    await leases[0]!.createIndexes();
  });
  afterAll(async () => {
    await conns[0]?.dropDatabase().catch(() => undefined);
    for (const c of conns) await c.close();
  });

  it('serialises read-change-write steps: 12 concurrent increments under one lease lose none, 5 rounds', async () => {
    for (let round = 0; round < 5; round++) {
      const id = `counter-${randomUUID()}`;
      await counters[0]!.create({ _id: id, count: 0 });
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          withLease(
            leases[i % 2]!,
            `counter:${id}`,
            async () => {
              const c = counters[i % 2]!;
              const now = await c.findById(id).lean<Counter>().exec();
              await c.updateOne({ _id: id }, { $set: { count: now!.count + 1 } }).exec();
            },
            { waitMs: 60_000 },
          ),
        ),
      );
      expect((await counters[1]!.findById(id).lean<Counter>().exec())!.count).toBe(12);
    }
  });

  it('gives a held lease to nobody else, and an expired one to exactly one taker', async () => {
    const key = `k-${randomUUID()}`;
    const first = await tryLease(leases[0]!, key, 60_000);
    expect(first?.n).toBe(1);
    const refused = await Promise.all([tryLease(leases[0]!, key, 60_000), tryLease(leases[1]!, key, 60_000)]);
    expect(refused).toEqual([null, null]);

    const short = `s-${randomUUID()}`;
    expect(await tryLease(leases[0]!, short, 1)).not.toBeNull();
    await new Promise((r) => setTimeout(r, 20));
    const takers = await Promise.all(Array.from({ length: 8 }, (_, i) => tryLease(leases[i % 2]!, short, 60_000)));
    expect(takers.flatMap((t) => (t ? [t.n] : []))).toEqual([2]);

    // Released by its holder while it lasts: the key is free again at once.
    await first!.release();
    expect(await tryLease(leases[1]!, key, 60_000)).not.toBeNull();

    // A holder that outlived its lease releases nothing: the later holder's number stays alone on the key.
    const late = `l-${randomUUID()}`;
    const stale = await tryLease(leases[0]!, late, 1);
    await new Promise((r) => setTimeout(r, 20));
    const next = await tryLease(leases[1]!, late, 60_000);
    expect(next?.n).toBe(2);
    await stale!.release();
    expect(await Promise.all([tryLease(leases[0]!, late, 60_000), tryLease(leases[1]!, late, 60_000)])).toEqual([
      null,
      null,
    ]);
    await next!.release();
    expect((await tryLease(leases[0]!, late, 60_000))?.n).toBe(1);
  });
});
