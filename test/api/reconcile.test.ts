import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import mongoose from 'mongoose';
import { reconcileStorage, type SendRunLookup, type SendRunStatus } from '../../src/maintenance/reconcile';
import { scheduleReconcile } from '../../src/maintenance/reconcile-schedule';
import { createLogger } from '../../src/observability/logger';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';

const PARTY = '0106:66666666';
const HOUR = 3_600_000;

/** Runs as a test sets them, by document id. */
class Runs implements SendRunLookup {
  readonly byId = new Map<string, SendRunStatus>();
  async describeSendInvoice(_tenantId: string, documentId: string): Promise<SendRunStatus> {
    return this.byId.get(documentId) ?? { status: 'not-found' };
  }
}

describe('storage reconciliation', () => {
  let ctx: TestContext;
  const runs = new Runs();
  const invoice = corpusFile(SAMPLE_UBL_INVOICE);
  const later = () => new Date(Date.now() + 2 * HOUR);
  const options = { minAgeMs: HOUR, windowMs: 14 * 24 * HOUR, limit: 500 };

  beforeAll(async () => {
    ctx = await createTestContext('reconcile', { workflows: new RecordingWorkflowStarter() });
    await ctx.core.directory.createTenant({ id: 'tenantRc', name: 'Rc' });
  });
  afterAll(async () => ctx.close());

  async function record(documentId: string, steps: Array<{ key: string; state: string }> = []) {
    const blob = await ctx.core.db.blobs.put(Readable.from([invoice]), {
      limit: 1 << 20,
      filename: 'document',
      contentType: 'application/xml',
    });
    await ctx.core.documents.insertOutbound({
      tenantId: 'tenantRc',
      documentId,
      partyId: PARTY,
      createdBy: 'api',
      contentType: 'application/xml',
      ...blob,
    });
    for (const s of steps) await ctx.core.documents.appendHistory('tenantRc', documentId, s);
    return blob.blobId;
  }
  const deps = () => ({ models: ctx.core.db.models, blobs: ctx.core.db.blobs, runs });
  const blobExists = async (id: string) =>
    (await ctx.core.db.connection
      .db!.collection(ctx.core.db.blobs.filesCollection)
      .countDocuments({ _id: id as never })) === 1;

  it('writes the final entry a completed workflow reached and the record lacks, and reports what it cannot repair', async () => {
    const behind = randomUUID();
    const failed = randomUUID();
    const running = randomUUID();
    const abandoned = randomUUID();
    const done = randomUUID();
    await record(behind, [
      { key: 'accepted', state: 'accepted' },
      { key: 'detect', state: 'detected' },
    ]);
    await record(failed, [{ key: 'accepted', state: 'accepted' }]);
    await record(running, [{ key: 'accepted', state: 'accepted' }]);
    await record(abandoned);
    await record(done, [
      { key: 'accepted', state: 'accepted' },
      { key: 'delivered', state: 'delivered' },
    ]);
    runs.byId.set(behind, { status: 'completed', state: 'InvoiceSentError' });
    runs.byId.set(failed, { status: 'terminated' });
    runs.byId.set(running, { status: 'running' });
    runs.byId.set(done, { status: 'completed', state: 'delivered' });

    const dry = await reconcileStorage(deps(), { ...options, now: later(), dryRun: true });
    const mine = (ids: string[]) => (f: { id: string }) => ids.some((id) => f.id.endsWith(id));
    expect(
      dry.findings.filter(mine([behind, failed, running, abandoned, done])).map((f) => [f.kind, f.repaired]),
    ).toEqual(
      expect.arrayContaining([
        ['state-behind-workflow', false],
        ['workflow-ended-without-outcome', false],
        ['intake-incomplete', false],
      ]),
    );
    expect((await ctx.core.documents.find('tenantRc', behind))!.state).toBe('detected');

    const report = await reconcileStorage(deps(), { ...options, now: later() });
    const found = report.findings.filter(mine([behind, failed, running, abandoned, done]));
    expect(found.map((f) => [f.kind, f.id.split(':')[1], f.repaired]).sort()).toEqual(
      [
        ['intake-incomplete', abandoned, false],
        ['state-behind-workflow', behind, true],
        ['workflow-ended-without-outcome', failed, false],
      ].sort(),
    );
    const repaired = await ctx.core.documents.find('tenantRc', behind);
    expect(repaired).toMatchObject({ state: 'InvoiceSentError', final: true });
    // The abandoned upload keeps its record and bytes: a retry of it may still come.
    const kept = await ctx.core.documents.find('tenantRc', abandoned);
    expect(await blobExists(kept!.blobId)).toBe(true);

    // Repaired once: a second run finds nothing more about it.
    const again = await reconcileStorage(deps(), { ...options, now: later() });
    expect(again.findings.filter(mine([behind]))).toEqual([]);
  });

  it('removes old bytes that nothing refers to, and never the bytes of a record or of young uploads', async () => {
    const orphan = await ctx.core.db.blobs.put(Readable.from([invoice]), {
      limit: 1 << 20,
      filename: 'document',
      contentType: 'application/xml',
    });
    const usedId = randomUUID();
    const used = await record(usedId);
    // Now: both are younger than the minimum age, so nothing is touched.
    const early = await reconcileStorage(deps(), { ...options, now: new Date() });
    expect(early.findings.filter((f) => f.id === orphan.blobId)).toEqual([]);
    expect(await blobExists(orphan.blobId)).toBe(true);

    const report = await reconcileStorage(deps(), { ...options, now: later() });
    expect(report.findings.filter((f) => f.id === orphan.blobId)).toEqual([
      expect.objectContaining({ kind: 'blob-without-record', repaired: true }),
    ]);
    expect(await blobExists(orphan.blobId)).toBe(false);
    expect(await blobExists(used)).toBe(true);
    expect(Buffer.compare(await ctx.core.db.blobs.read(used), invoice)).toBe(0);
  });

  it('keeps a stored conversion while the record of its source bytes exists, and removes it after', async () => {
    const source = await record(randomUUID());
    const convert = (from: string) =>
      ctx.core.db.blobs.put(Readable.from([invoice]), {
        limit: 1 << 20,
        filename: 'converted',
        contentType: 'application/xml',
        metadata: { tenantId: 'tenantRc', convertedFrom: from },
      });
    const kept = await convert(source);
    const stray = await convert('no-such-blob');
    const report = await reconcileStorage(deps(), { ...options, now: later() });
    expect(report.findings.filter((f) => f.id === kept.blobId)).toEqual([]);
    expect(await blobExists(kept.blobId)).toBe(true);
    expect(report.findings.filter((f) => f.id === stray.blobId)).toEqual([
      expect.objectContaining({ kind: 'blob-without-record', repaired: true }),
    ]);
    expect(await blobExists(stray.blobId)).toBe(false);
  });

  it('removes the chunks of an upload that died before its file record', async () => {
    const blobs = ctx.core.db.blobs;
    const big = Buffer.alloc(blobs.chunkSize * 2 + 10, 0x20);
    const kept = await blobs.put(Readable.from([big]), {
      limit: big.length,
      filename: 'x',
      contentType: 'application/xml',
    });
    await record(randomUUID()); // some other record
    // The dead upload: chunks under a fresh blob id with no file record.
    const deadId = new mongoose.Types.ObjectId().toHexString();
    const chunks = ctx.core.db.connection.db!.collection<{ _id: string; data: Buffer }>(blobs.chunksCollection);
    await chunks.insertMany([0, 1].map((n) => ({ _id: `${deadId}:${n}`, data: Buffer.alloc(4) })));
    const report = await reconcileStorage({ models: ctx.core.db.models, blobs, runs }, { ...options, now: later() });
    expect(report.findings.filter((f) => f.id === deadId)).toEqual([
      expect.objectContaining({ kind: 'chunks-without-blob', repaired: true }),
    ]);
    expect(await chunks.countDocuments({ _id: { $in: [`${deadId}:0`, `${deadId}:1`] } })).toBe(0);
    // The blob whose file record exists keeps every chunk (it is an orphan itself and goes as a whole, file first).
    expect(report.findings.filter((f) => f.id === kept.blobId).map((f) => f.kind)).toEqual(['blob-without-record']);
  });

  it('runs one slot once however many processes try it', async () => {
    const logger = createLogger({ level: 'silent' });
    const schedules = [1, 2, 3].map(() =>
      scheduleReconcile({ ...deps(), logger }, { ...options, intervalMs: 3_600_000 }),
    );
    try {
      const at = later();
      const ran = await Promise.all(schedules.map((s) => s.runOnce(at)));
      expect(ran.filter(Boolean)).toHaveLength(1);
    } finally {
      for (const s of schedules) s.stop();
    }
  });
});
