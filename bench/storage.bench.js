'use strict';
// Storage benchmark: what the gateway's own repository calls cost on the configured database as data accumulates.
// Intake and the worker look documents up by (tenantId, documentId) and read blobs from the blob store; this suite
// times those exact calls (the compiled src/storage code) at growing collection sizes, next to a lookup by primary key.

const crypto = require('node:crypto');
const path = require('node:path');
const { Readable } = require('node:stream');
const cpu = require('./lib/cpu');
const gateway = require('./lib/gateway');
const { summarize } = require('./lib/load');
const { KiB, MiB } = require('./lib/invoices');

const ROOT = path.resolve(__dirname, '..');

const PLANS = {
  full: { docCounts: [100, 1000, 4000], storedMiB: [0, 25, 100], lookups: 20, reads: 5 },
  quick: { docCounts: [100, 1000], storedMiB: [0, 25], lookups: 10, reads: 3 },
};

/**
 * Times `n` sequential calls; with `pids` ({ database }) also the database's CPU ms per call (FerretDB, and on the
 * PostgreSQL backend the PostgreSQL server and its backends), which does not depend on what else runs.
 */
async function timeEach(n, fn, pids) {
  const ms = [];
  const a = pids && cpu.supported() ? cpu.snapshot(pids) : undefined;
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn(i);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const out = summarize(ms);
  if (a) {
    const db = cpu.cpuBetween(a, cpu.snapshot(pids)).perProcess.database;
    if (db !== undefined) out.databaseCpuMs = Math.round((100000 * db) / n) / 100;
  }
  return out;
}

/** A record shaped like DocumentRepository.insertOutbound writes it; inserted in bulk to keep seeding quick. */
function documentRecord(tenantId, i) {
  const now = new Date();
  const documentId = crypto.randomUUID();
  return {
    _id: `${tenantId}:${documentId}`,
    tenantId,
    documentId,
    partyId: '0106:12345678',
    channel: null,
    createdBy: 'api',
    contentType: 'application/xml',
    filename: null,
    size: 20 * KiB,
    sha256: crypto.createHash('sha256').update(String(i)).digest('hex'),
    blobId: crypto.randomBytes(12).toString('hex'),
    direction: 'outbound',
    accepted: true,
    state: 'detected',
    history: [
      { state: 'received', at: now, key: 'received' },
      { state: 'accepted', at: now, key: 'accepted' },
    ],
    format: null,
    createdAt: now,
    updatedAt: now,
  };
}

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { scenarios: [], figures: [], targets: [], notes: [], problems: [], tables: [] };
  const { connectDatabase } = require(path.join(ROOT, 'dist/src/storage/connection'));
  const { DocumentRepository } = require(path.join(ROOT, 'dist/src/storage/document.repository'));
  const dbName = `bench${gateway.randomLetters(10)}`;
  const db = await connectDatabase(ctx.svc.mongodbUri, { dbName });
  try {
    const documents = new DocumentRepository(db.models);
    const collection = db.models.Document.collection;
    const tenantId = 'bench-tenant';
    const pids = ctx.serverPids && ctx.serverPids.database ? { database: ctx.serverPids.database } : undefined;

    ctx.log('storage: document lookups');
    const lookupRows = [];
    let seeded = 0;
    for (const count of plan.docCounts) {
      const batch = [];
      for (; seeded < count; seeded++) batch.push(documentRecord(tenantId, seeded));
      for (let i = 0; i < batch.length; i += 500)
        await collection.insertMany(batch.slice(i, i + 500), { ordered: false });
      // Probe records spread over the collection, so no single position (first, last) decides the figure.
      const probes = await collection.find({}, { projection: { _id: 1, documentId: 1 } }).toArray();
      const pick = (i) => probes[Math.floor(((i + 0.5) * probes.length) / plan.lookups)];
      const byKey = await timeEach(
        plan.lookups,
        async (i) => {
          if (!(await documents.find(tenantId, pick(i).documentId)))
            throw new Error('documents.find missed a seeded record');
        },
        pids,
      );
      const byId = await timeEach(
        plan.lookups,
        async (i) => {
          if (!(await db.models.Document.findById(pick(i)._id).lean().exec()))
            throw new Error('findById missed a seeded record');
        },
        pids,
      );
      // One writer per record, as the gateway's single-owner updates are.
      const update = await timeEach(
        plan.lookups,
        async (i) => {
          const res = await collection.updateOne({ _id: pick(i)._id }, { $set: { updatedAt: new Date() } });
          if (res.matchedCount !== 1) throw new Error('updateOne({ _id }) missed a seeded record');
        },
        pids,
      );
      lookupRows.push({ documents: count, findByTenantAndDocumentIdMs: byKey, findByIdMs: byId, updateByIdMs: update });
    }
    const dbCpu = (x) => (x.databaseCpuMs === undefined ? '-' : x.databaseCpuMs);
    result.tables.push({
      id: 'document-lookup',
      title: 'document lookup and update (ms per call, sequential; db CPU = database CPU ms per call)',
      header: [
        'documents in collection',
        'documents.find(tenantId, documentId) p50',
        'mean',
        'db CPU',
        'findById p50',
        'mean',
        'db CPU',
        'updateOne({ _id }) p50',
        'mean',
        'db CPU',
      ],
      rows: lookupRows.map((r) => [
        r.documents,
        r.findByTenantAndDocumentIdMs.p50,
        r.findByTenantAndDocumentIdMs.mean,
        dbCpu(r.findByTenantAndDocumentIdMs),
        r.findByIdMs.p50,
        r.findByIdMs.mean,
        dbCpu(r.findByIdMs),
        r.updateByIdMs.p50,
        r.updateByIdMs.mean,
        dbCpu(r.updateByIdMs),
      ]),
      data: lookupRows,
    });

    ctx.log('storage: blob reads');
    const small = await db.blobs.put(Readable.from([crypto.randomBytes(20 * KiB)]), {
      limit: 25 * MiB,
      filename: 'probe',
      contentType: 'application/xml',
    });
    // A blob of several chunks, so chunk reads are timed too (a 20 KiB blob may be stored whole in one record).
    const large = await db.blobs.put(Readable.from([crypto.randomBytes(3 * MiB)]), {
      limit: 25 * MiB,
      filename: 'probe',
      contentType: 'application/xml',
    });
    const blobRows = [];
    let stored = 0;
    for (const target of plan.storedMiB) {
      while (stored < target) {
        await db.blobs.put(Readable.from([crypto.randomBytes(5 * MiB)]), {
          limit: 25 * MiB,
          filename: 'filler',
          contentType: 'application/xml',
        });
        stored += 5;
      }
      const read = await timeEach(
        plan.reads,
        async () => {
          const bytes = await db.blobs.read(small.blobId);
          if (bytes.length !== 20 * KiB) throw new Error(`blob read returned ${bytes.length} bytes`);
        },
        pids,
      );
      const put = await timeEach(
        plan.reads,
        () =>
          db.blobs.put(Readable.from([crypto.randomBytes(20 * KiB)]), {
            limit: 25 * MiB,
            filename: 'probe',
            contentType: 'application/xml',
          }),
        pids,
      );
      const readLarge = await timeEach(
        plan.reads,
        async () => {
          const bytes = await db.blobs.read(large.blobId);
          if (bytes.length !== 3 * MiB) throw new Error(`blob read returned ${bytes.length} bytes`);
        },
        pids,
      );
      blobRows.push({ otherBlobsMiB: stored, read20KiBMs: read, put20KiBMs: put, read3MiBMs: readLarge });
    }
    result.tables.push({
      id: 'blob-read',
      title: 'blob store, one 20 KiB blob and one 3 MiB blob (ms per call, sequential; db CPU as above)',
      header: [
        'MiB of other blobs stored',
        'blobs.read 20 KiB p50',
        'mean',
        'db CPU',
        'blobs.put 20 KiB p50',
        'mean',
        'db CPU',
        'blobs.read 3 MiB p50',
        'mean',
        'db CPU',
      ],
      rows: blobRows.map((r) => [
        r.otherBlobsMiB,
        r.read20KiBMs.p50,
        r.read20KiBMs.mean,
        dbCpu(r.read20KiBMs),
        r.put20KiBMs.p50,
        r.put20KiBMs.mean,
        dbCpu(r.put20KiBMs),
        r.read3MiBMs.p50,
        r.read3MiBMs.mean,
        dbCpu(r.read3MiBMs),
      ]),
      data: blobRows,
    });

    const first = lookupRows[0];
    const last = lookupRows[lookupRows.length - 1];
    result.notes.push(
      `documents.find grew ${(last.findByTenantAndDocumentIdMs.mean / first.findByTenantAndDocumentIdMs.mean).toFixed(1)}× from ${first.documents} to ${last.documents} documents; ` +
        `findById grew ${(last.findByIdMs.mean / first.findByIdMs.mean).toFixed(1)}×; ` +
        `updateOne({ _id }) grew ${(last.updateByIdMs.mean / first.updateByIdMs.mean).toFixed(1)}×`,
      `blobs.read of the same 20 KiB blob grew ${(blobRows[blobRows.length - 1].read20KiBMs.mean / blobRows[0].read20KiBMs.mean).toFixed(1)}× ` +
        `with ${blobRows[blobRows.length - 1].otherBlobsMiB} MiB of other blobs stored`,
      'sequential calls from one connection in the benchmark process; no API or worker running',
    );
    return result;
  } finally {
    await db.connection.dropDatabase().catch(() => {});
    await db.close();
  }
}

module.exports = {
  name: 'storage',
  title: 'Storage calls on the configured database as data grows (compiled src/storage code)',
  run,
};
