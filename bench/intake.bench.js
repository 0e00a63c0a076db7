'use strict';
// Intake benchmark: upload acceptance latency and throughput of POST /api/v1/{partyId}/salesInvoice/send against the
// real API and worker processes, for a 20 KB and a 5 MB invoice at a fixed concurrency. (The API's memory under 24 MB
// uploads is the memory suite: it needs a database that earlier passes have not filled.)

const { randomUUID } = require('node:crypto');
const gateway = require('./lib/gateway');
const { buildUblInvoice, KiB, MiB, formatBytes } = require('./lib/invoices');
const { runLoad, brokenReason } = require('./lib/load');
const cpu = require('./lib/cpu');
const { openDocuments, pending, waitForWorker } = require('./lib/documents');

const CONCURRENCY = 20;
const TARGET_P99_MS = 50;
// The API's per-client limit (6000/min by default) would turn a closed-loop run into a 429 test.
const API_RATE_LIMIT = '1000000000';

// Seconds per pass; `drainS` bounds the wait for the worker after each pass.
const PLANS = {
  full: { baselineS: 5, warmupS: 3, smallS: 30, mediumS: 30, drainS: 20 },
  quick: { baselineS: 2, warmupS: 1, smallS: 5, mediumS: 5, drainS: 10 },
};

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { scenarios: [], figures: [], targets: [], notes: [], problems: [], profiles: [] };
  const payloads = { small: buildUblInvoice(20 * KiB), medium: buildUblInvoice(5 * MiB) };
  result.notes.push(
    `payloads: ${payloads.small.source} grown with invoice lines to ${formatBytes(payloads.small.body.length)} ` +
      `(${payloads.small.lines} lines) and ${formatBytes(payloads.medium.body.length)} (${payloads.medium.lines} lines); ` +
      'raw application/xml bodies, a new X-Service-DocumentId each',
    `API env: RATE_LIMIT_API_PER_MINUTE=${API_RATE_LIMIT} (raised from the default 6000 so the closed loop measures intake, not the limiter)`,
  );

  ctx.log('intake: starting API and worker');
  const gw = await gateway.startGateway({
    svc: ctx.svc,
    logDir: ctx.logDir,
    label: 'intake',
    env: { RATE_LIMIT_API_PER_MINUTE: API_RATE_LIMIT },
    cpuProfileDir: ctx.cpuProfileDir,
  });
  const pids = { api: gw.api.pid, worker: gw.worker.pid, ...ctx.serverPids };
  let store;
  try {
    const creds = await gateway.seedTenant(gw);
    const token = await gateway.fetchToken(gw, creds);
    store = await openDocuments(ctx.svc.mongodbUri, gw.dbName);

    // One upload end to end before any load: the API accepts it and the worker recognises it.
    const one = await gateway.request(`${gw.url}/api/v1/${creds.partyId}/salesInvoice/send`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/xml',
        'X-Service-DocumentId': randomUUID(),
      },
      body: payloads.small.body,
    });
    if (one.status !== 200) throw new Error(`first upload answered ${one.status}: ${one.body.slice(0, 300)}`);
    const first = await waitForWorker(store, 60_000);
    if (!first.drained || first.counts.detected !== 1) {
      throw new Error(`the worker did not process the first upload within 60 s: ${JSON.stringify(first.counts)}`);
    }

    const scenario = async (id, label, payload, connections, loadOpts, { record = true, profile = false } = {}) => {
      ctx.log(`intake: ${label}`);
      if (profile) await gw.startProfiles();
      const m = await cpu.measureCpu(
        pids,
        () =>
          runLoad({
            url: gw.url,
            title: label,
            connections,
            request: gateway.uploadRequest({ partyId: creds.partyId, token, body: payload.body }),
            ...loadOpts,
          }),
        // Let the worker finish what this pass started, so its backlog does not load the next pass.
        () => waitForWorker(store, plan.drainS * 1000),
      );
      // Outside the CPU window: writing a profile costs the profiled process CPU of its own.
      if (profile)
        result.profiles.push(
          ...(await gw.stopProfiles(id)).map((p) => ({ ...p, pass: `${label}, and the wait for the worker after it` })),
        );
      const r = m.result;
      const drain = m.settled;
      const crashed = gw.crashed();
      if (crashed.length) throw new Error(crashed.join('\n'));
      const entry = {
        id,
        label,
        payloadBytes: payload.body.length,
        ...r,
        workerDrainS: drain.ms / 1000,
        workerDrained: drain.drained,
        workerBacklog: drain.drained ? 0 : pending(drain.counts),
        cpu: m.duringPass ? cpu.cpuCost(m, r.ok, ctx.cores) : undefined,
      };
      const broken = brokenReason(r);
      if (broken) result.problems.push(`${label}${record ? '' : ' (warm-up)'}: ${broken}`);
      if (!record) return entry;
      result.scenarios.push(entry);
      if (!drain.drained) {
        result.notes.push(
          `${label}: ${entry.workerBacklog} document(s) still waiting for the worker ${Math.round(drain.ms / 1000)} s after the pass; the next pass ran with that backlog`,
        );
      }
      if (!broken && r.ok === 0)
        result.notes.push(
          `${label}: no upload completed within the pass (${r.abandoned} in flight when it ended); no latency figure`,
        );
      return entry;
    };

    await scenario(
      'upload-20k-c1',
      `${formatBytes(payloads.small.body.length)} upload, 1 client (unloaded)`,
      payloads.small,
      1,
      { durationS: plan.baselineS },
    );
    await scenario('warmup', 'warm-up', payloads.small, CONCURRENCY, { durationS: plan.warmupS }, { record: false });
    const small = await scenario(
      'upload-20k',
      `${formatBytes(payloads.small.body.length)} upload, ${CONCURRENCY} clients`,
      payloads.small,
      CONCURRENCY,
      { durationS: plan.smallS },
      { profile: true },
    );
    await scenario(
      'upload-5m',
      `${formatBytes(payloads.medium.body.length)} upload, ${CONCURRENCY} clients`,
      payloads.medium,
      CONCURRENCY,
      { durationS: plan.mediumS, timeoutS: 120 },
    );

    const counts = await store.counts();
    result.figures.push({ id: 'documents', label: 'documents stored in this run, by state', value: counts, unit: '' });
    if (counts.rejected)
      result.problems.push(`the worker rejected ${counts.rejected} benchmark invoice(s); they should all be detected`);

    // No completed upload in a whole pass means every one took longer than the pass: a miss, not a missing figure.
    const p99 = small.ok > 0 ? small.latencyMs.p99 : small.durationS * 1000;
    result.targets.push({
      id: 'upload-20k-p99',
      label: `20 KB upload accepted, p99 at ${CONCURRENCY} concurrent clients${small.ok > 0 ? '' : ' (none completed; reading is the pass length)'}`,
      measured: p99,
      unit: 'ms',
      target: TARGET_P99_MS,
      pass: p99 < TARGET_P99_MS,
    });
    return result;
  } finally {
    if (store) await store.close().catch(() => {});
    await gw.stop();
    if (ctx.svc.providers.database === 'env') await gateway.dropDatabase(ctx.svc.mongodbUri, gw.dbName).catch(() => {});
  }
}

module.exports = {
  name: 'intake',
  title: 'Document intake: POST /api/v1/{partyId}/salesInvoice/send (real API + worker processes)',
  run,
};
