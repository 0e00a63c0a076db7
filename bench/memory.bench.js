'use strict';
// Memory benchmark: the API process's resident memory while 24 MB invoices stream in, several at a time, against the
// real API and worker processes on an empty database. Uploads go straight to the blob store, so the API should hold none of
// them whole and its memory should stay flat however large they are.

const gateway = require('./lib/gateway');
const { buildUblInvoice, MiB, formatBytes } = require('./lib/invoices');
const { runLoad, brokenReason } = require('./lib/load');
const memory = require('./lib/memory');
const cpu = require('./lib/cpu');

const TARGET_RSS_BYTES = 300 * MiB;
const LARGE_BYTES = Math.floor(23.9 * MiB);
const CONCURRENCY = 8;
const SAMPLE_MS = 50;

// `capS` bounds the pass: on a slow database the bodies stream in only as fast as it stores them.
const PLANS = {
  full: { rounds: 2, capS: 90 },
  quick: { rounds: 1, capS: 45 },
};

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { scenarios: [], figures: [], targets: [], notes: [], problems: [] };
  const payload = buildUblInvoice(LARGE_BYTES);
  const sent = CONCURRENCY * payload.body.length;
  result.notes.push(
    `payload: ${payload.source} grown with invoice lines to ${formatBytes(payload.body.length)} (${payload.lines} lines), ` +
      `just under the 24 MiB limit; ${CONCURRENCY} clients, ${plan.rounds} upload(s) each, capped at ${plan.capS} s`,
    'default API settings (rate limits untouched: a few dozen requests stay far below them)',
  );

  ctx.log('memory: starting API and worker');
  const gw = await gateway.startGateway({ svc: ctx.svc, logDir: ctx.logDir, label: 'memory' });
  try {
    if (!memory.supported(gw.api.pid)) {
      result.notes.push('not measured: /proc/<pid>/status is not readable on this system');
      return result;
    }
    const creds = await gateway.seedTenant(gw);
    const token = await gateway.fetchToken(gw, creds);
    const label = `${formatBytes(payload.body.length)} upload, ${CONCURRENCY} clients`;
    ctx.log(`memory: ${label}`);

    const sampler = memory.sampleRss(gw.api.pid, SAMPLE_MS);
    const readBefore = memory.bytesRead(gw.api.pid);
    const m = await cpu.measureCpu({ api: gw.api.pid, worker: gw.worker.pid, ...ctx.serverPids }, () =>
      runLoad({
        url: gw.url,
        title: label,
        connections: CONCURRENCY,
        request: gateway.uploadRequest({ partyId: creds.partyId, token, body: payload.body }),
        amount: CONCURRENCY * plan.rounds,
        maxS: plan.capS,
        // Past the cap, so the cap ends a slow pass and its open uploads count as cut, not failed.
        timeoutS: plan.capS + 60,
      }),
    );
    const rss = sampler.stop();
    const readAfter = memory.bytesRead(gw.api.pid);
    const r = m.result;
    const crashed = gw.crashed();
    if (crashed.length) throw new Error(crashed.join('\n'));

    // rchar counts every byte the API read: request bodies plus the small replies of the database and Temporal. It
    // shows whether the bodies really reached the API even when the database was too slow for an upload to finish.
    const received = readBefore !== undefined && readAfter !== undefined ? readAfter - readBefore : undefined;
    const streamed = r.ok >= CONCURRENCY || (received !== undefined && received >= sent);
    result.scenarios.push({
      id: 'upload-24m',
      label,
      payloadBytes: payload.body.length,
      ...r,
      rss,
      apiBytesRead: received,
      cpu: m.duringPass ? cpu.cpuCost(m, r.ok, ctx.cores) : undefined,
    });
    const broken = brokenReason(r);
    if (broken) result.problems.push(`${label}: ${broken}`);
    if (r.cutShort)
      result.notes.push(
        `stopped at the ${plan.capS} s cap with ${r.abandoned} upload(s) still in flight (not counted as errors)`,
      );

    result.figures.push(
      { id: 'api-rss-before', label: 'API RSS before the uploads', value: rss.startRss, unit: 'bytes' },
      {
        id: 'api-rss-peak',
        label: `API peak RSS during the pass (VmRSS every ${SAMPLE_MS} ms, ${rss.samples} samples)`,
        value: rss.peakRss,
        unit: 'bytes',
      },
      {
        id: 'api-vmhwm',
        label: 'API VmHWM (kernel high-water mark since the process started)',
        value: rss.hwm,
        unit: 'bytes',
      },
    );
    if (received !== undefined) {
      result.figures.push({
        id: 'api-bytes-read',
        label: `bytes the API read during the pass (/proc/<pid>/io rchar; one round of ${CONCURRENCY} bodies is ${formatBytes(sent)})`,
        value: received,
        unit: 'bytes',
      });
    }
    // The high-water mark also covers start-up and spikes between samples, so the larger reading decides.
    const peak = Math.max(rss.peakRss, rss.hwm || 0);
    result.targets.push({
      id: 'api-rss-24m',
      label: `API memory while ${CONCURRENCY} uploads of 24 MB stream in (max of peak VmRSS and VmHWM)`,
      measured: peak,
      unit: 'bytes',
      target: TARGET_RSS_BYTES,
      // Judged once a full round of bodies has reached the API; before that the reading says little.
      pass: streamed ? peak < TARGET_RSS_BYTES : undefined,
      why: streamed
        ? undefined
        : `the API read ${received === undefined ? 'an unknown amount' : formatBytes(received)} of the ${formatBytes(sent)} in flight`,
    });
    return result;
  } finally {
    await gw.stop();
    if (ctx.svc.providers.database === 'env') await gateway.dropDatabase(ctx.svc.mongodbUri, gw.dbName).catch(() => {});
  }
}

module.exports = {
  name: 'memory',
  title: 'API memory while 24 MB uploads stream in (real API + worker processes, empty database)',
  run,
};
