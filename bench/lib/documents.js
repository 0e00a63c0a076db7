'use strict';
// Direct reads of the benchmark database, to follow the worker: how many uploaded documents it has not processed yet,
// and whether any ended rejected (the benchmark invoices must all be recognised).

const services = require('../../scripts/lib/services');

function driver() {
  return require(require.resolve('mongodb', { paths: [services.REPO_ROOT] }));
}

async function openDocuments(uri, dbName) {
  const { MongoClient } = driver();
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  const db = client.db(dbName);
  return {
    /** `received`: stored, not yet through detection; then the detection entries by outcome (detected, rejected). */
    async counts() {
      const total = await db.collection('documents').countDocuments();
      const rows = await db
        .collection('documenthistory')
        .aggregate([{ $match: { key: 'detect' } }, { $group: { _id: '$state', n: { $sum: 1 } } }])
        .toArray();
      const byState = Object.fromEntries(rows.map((r) => [r._id, r.n]));
      const done = rows.reduce((n, r) => n + r.n, 0);
      return { received: total - done, ...byState };
    },
    close: () => client.close(),
  };
}

/** Documents the worker still has to process: stored, not yet detected or rejected. */
function pending(counts) {
  return counts.received || 0;
}

/**
 * Polls until nothing is pending or `timeoutMs` passes; returns { drained, ms, counts }. Each poll is a query the
 * database pays for too, so it polls once a second: a small share next to the worker's own queries.
 */
async function waitForWorker(store, timeoutMs, intervalMs = 1000) {
  const started = Date.now();
  for (;;) {
    const counts = await store.counts();
    if (pending(counts) === 0) return { drained: true, ms: Date.now() - started, counts };
    if (Date.now() - started > timeoutMs) return { drained: false, ms: Date.now() - started, counts };
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

module.exports = { openDocuments, pending, waitForWorker };
