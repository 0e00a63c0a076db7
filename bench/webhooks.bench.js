'use strict';
// Webhook delivery benchmark against the real API and worker processes on the local Temporal dev server:
// - baseline: workflows per second of a workflow with one no-op activity (the engine's ceiling on this machine);
// - deliveries per second to a healthy receiver on 127.0.0.1 (closed loop: event produced through the API's ping
//   endpoint, which runs the one publishEvent path, then delivered, signed, by a deliverWebhook workflow);
// - p50/p99 event→delivery latency at half that rate (open loop);
// - the same two figures while a second hook gets events at a low rate, once with a healthy receiver (the control:
//   the same extra event load) and once with a receiver that never answers (attempts hang until the 100 s timeout).
//   The hung receiver's own effect is the difference between those two;
// - the two delivery models side by side on one worker of their own (bench/lib/delivery-models.js): one run per
//   (event, hook), the product's, against one run per event fanning out to its hooks, with 1 and 3 hooks per event.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const http = require('node:http');
const path = require('node:path');
const gateway = require('./lib/gateway');
const { closedLoop, openLoop } = require('./lib/loops');
const cpu = require('./lib/cpu');
const { prepareComparison, comparisonTables } = require('./lib/delivery-models');
const services = require('../scripts/lib/services');

const ROOT = services.REPO_ROOT;
const HOST = '127.0.0.1';
const NOOP_WORKER_JS = path.join(__dirname, 'lib', 'noop-worker.js');
const KEY = 'benchmark-secure-key-0123456789';
// The default limit (6000 per client per minute) would turn the closed loop into a 429 test.
const API_RATE_LIMIT = '1000000000';
const DELIVERY_WAIT_MS = 60_000;

const PLANS = {
  full: { concurrency: 20, warmupS: 5, throughputS: 20, latencyS: 20, hungRate: 2, compareS: 15 },
  quick: { concurrency: 10, warmupS: 2, throughputS: 5, latencyS: 5, hungRate: 2, compareS: 4 },
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A receiver on 127.0.0.1 recording when each delivery id arrived; `hang` never answers. */
async function startReceiver({ hang }) {
  const arrivals = new Map();
  const waiters = new Map();
  const sockets = new Set();
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      const id = String(req.headers['x-service-delivery'] || '');
      const at = performance.now();
      if (!arrivals.has(id)) arrivals.set(id, at);
      const w = waiters.get(id);
      if (w) {
        waiters.delete(id);
        w(at);
      }
      if (hang) return;
      res.writeHead(204);
      res.end();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, HOST, r));
  return {
    url: `http://${HOST}:${server.address().port}/hook`,
    requests: () => requests,
    openConnections: () => sockets.size,
    /** Resolves the arrival time (performance.now) of a delivery id, or undefined after the wait. */
    arrival(id, timeoutMs = DELIVERY_WAIT_MS) {
      if (arrivals.has(id)) return Promise.resolve(arrivals.get(id));
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(id);
          resolve(undefined);
        }, timeoutMs);
        waiters.set(id, (at) => {
          clearTimeout(timer);
          resolve(at);
        });
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(() => r()));
    },
  };
}

/**
 * A JSON request to the API over a keep-alive agent. A request that fails with a reset on a reused socket is sent
 * once more: the server closed that idle keep-alive socket as the request went out, so it never read it (the retry
 * Node's http documentation gives for this race).
 */
async function apiCall(agent, url, opts) {
  try {
    return await apiRequest(agent, url, opts);
  } catch (e) {
    if (!e.reusedSocket || !(e.code === 'ECONNRESET' || /socket hang up/.test(e.message))) throw e;
    return apiRequest(agent, url, opts);
  }
}

function apiRequest(agent, url, { method, token, body }) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(
      url,
      {
        method,
        agent,
        timeout: 30_000,
        headers: { Authorization: `Bearer ${token}`, ...(data ? { 'Content-Type': 'application/json', 'Content-Length': data.length } : {}) },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode < 200 || res.statusCode > 299) return reject(new Error(`${method} ${url} answered ${res.statusCode}: ${text.slice(0, 300)}`));
          resolve(text ? JSON.parse(text) : undefined);
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', (e) => {
      e.reusedSocket = req.reusedSocket;
      reject(e);
    });
    req.end(data);
  });
}

function startNoopWorker(ctx, taskQueue) {
  const sup = services.createSupervisor();
  const logFile = path.join(ctx.logDir, 'webhooks-noop-worker.log');
  const fd = fs.openSync(logFile, 'a');
  let managed;
  try {
    managed = sup.spawn('noop-worker', process.execPath, [NOOP_WORKER_JS], {
      cwd: ROOT,
      env: { ...process.env, TEMPORAL_ADDRESS: ctx.svc.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  return {
    pid: () => managed.child.pid,
    async ready() {
      const deadline = Date.now() + 120_000;
      while (!/noop worker running/.test(fs.readFileSync(logFile, 'utf8'))) {
        if (managed.exited) throw new Error(`noop worker exited: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
        if (Date.now() > deadline) throw new Error('noop worker did not start within 120 s');
        await sleep(200);
      }
    },
    async stop() {
      await sup.stopChild(managed, 10_000);
      sup.close();
    },
  };
}

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { scenarios: [], figures: [], targets: [], notes: [], problems: [], tables: [] };
  const { Client, Connection } = require('@temporalio/client');
  const { deliveryIdFor } = require(path.join(ROOT, 'dist', 'src', 'webhooks', 'delivery-id.js'));

  // 1. The engine's ceiling: a workflow with one no-op activity, same server, same closed loop.
  const noopQueue = `bench-noop-${crypto.randomUUID()}`;
  const noopWorker = startNoopWorker(ctx, noopQueue);
  const connection = await Connection.connect({ address: ctx.svc.temporalAddress });
  let baseline;
  try {
    ctx.log('webhooks: baseline worker starting');
    await noopWorker.ready();
    const client = new Client({ connection });
    const once = async () => {
      const t = performance.now();
      await client.workflow.execute('benchNoop', { taskQueue: noopQueue, workflowId: `bench-noop-${crypto.randomUUID()}` });
      return performance.now() - t;
    };
    ctx.log('webhooks: baseline warm-up');
    await closedLoop(plan.concurrency, plan.warmupS, once);
    ctx.log(`webhooks: baseline, ${plan.concurrency} loops for ${plan.throughputS} s`);
    const m = await cpu.measureCpu({ worker: noopWorker.pid(), ...ctx.serverPids }, () => closedLoop(plan.concurrency, plan.throughputS, once));
    baseline = { ...m.result, cpu: cpu.cpuCost(m, m.result.done, ctx.cores) };
  } finally {
    await noopWorker.stop();
    await connection.close();
  }

  // 2. The gateway: real API and worker processes.
  const healthy = await startReceiver({ hang: false });
  const second = await startReceiver({ hang: false });
  const hung = await startReceiver({ hang: true });
  ctx.log('webhooks: starting API and worker');
  const gw = await gateway.startGateway({
    svc: ctx.svc,
    logDir: ctx.logDir,
    label: 'webhooks',
    env: { RATE_LIMIT_API_PER_MINUTE: API_RATE_LIMIT, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32' },
    cpuProfileDir: ctx.cpuProfileDir,
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: plan.concurrency * 4 });
  // Its worker bundles its workflows at start: started now and awaited before any pass, so that costs no figure.
  const comparison = prepareComparison({ ctx, gw });
  const loads = [['start of the suite', os.loadavg()]];
  try {
    const creds = await gateway.seedTenant(gw);
    const token = await gateway.fetchToken(gw, creds);
    const hook = async (topic, url) => (await apiCall(agent, `${gw.url}/api/v1/hook`, { method: 'POST', token, body: { url, topic, secureKey: KEY } })).id;
    const healthyHook = await hook('BenchHealthy', healthy.url);
    const secondHook = await hook('BenchSecond', second.url);
    const hungHook = await hook('BenchHung', hung.url);
    const compareHooks = [];
    for (const t of ['BenchFanA', 'BenchFanB', 'BenchFanC']) compareHooks.push(await hook(t, healthy.url));
    ctx.log('webhooks: waiting for the comparison worker');
    await comparison.ready();

    /** One event through the API (ping → publishEvent), until the receiver has it; ms from send to arrival. */
    const deliverOnce = async (hookId, receiver) => {
      const t = performance.now();
      const { eventId } = await apiCall(agent, `${gw.url}/api/v1/hook/${hookId}/ping`, { method: 'POST', token });
      const at = await receiver.arrival(deliveryIdFor(eventId, hookId));
      if (at === undefined) throw new Error(`delivery of ${eventId} not received within ${DELIVERY_WAIT_MS / 1000} s`);
      return at - t;
    };
    const healthyOnce = () => deliverOnce(healthyHook, healthy);
    const pids = { api: gw.api.pid, worker: gw.worker.pid, ...ctx.serverPids };

    /** Pings a second hook at plan.hungRate per second until stopped. */
    const background = (hookId) => {
      let stop = false;
      let sent = 0;
      const loop = (async () => {
        while (!stop) {
          apiCall(agent, `${gw.url}/api/v1/hook/${hookId}/ping`, { method: 'POST', token }).then(
            () => (sent += 1),
            () => undefined,
          );
          await sleep(1000 / plan.hungRate);
        }
      })();
      return {
        async stop() {
          stop = true;
          await loop;
          return sent;
        },
      };
    };

    ctx.log('webhooks: warm-up');
    await closedLoop(plan.concurrency, plan.warmupS, healthyOnce);
    await gw.startProfiles();
    ctx.log(`webhooks: throughput, ${plan.concurrency} loops for ${plan.throughputS} s`);
    const mThrough = await cpu.measureCpu(pids, () => closedLoop(plan.concurrency, plan.throughputS, healthyOnce));
    const through = { ...mThrough.result, cpu: cpu.cpuCost(mThrough, mThrough.result.done, ctx.cores) };
    const halfRate = Math.max(1, through.perSecond / 2);
    ctx.log(`webhooks: latency at ${fmt(halfRate, 1)} events/s for ${plan.latencyS} s`);
    const latency = await openLoop(halfRate, plan.latencyS, healthyOnce);
    loads.push(['after the healthy passes', os.loadavg()]);

    // Control: the same extra event load as the hung receiver's, to a healthy receiver.
    ctx.log(`webhooks: a second healthy receiver gets ${plan.hungRate} events/s`);
    const control = background(secondHook);
    const mControl = await cpu.measureCpu(pids, () => closedLoop(plan.concurrency, plan.throughputS, healthyOnce));
    const throughControl = { ...mControl.result, cpu: cpu.cpuCost(mControl, mControl.result.done, ctx.cores) };
    // On FerretDB the database's cost per delivery grows with the events stored, so the capacity measured first may
    // no longer hold: the control and the hung pass both run at half of the control's own capacity (if lower), so
    // they compare the hung receiver, not a queue that grows in both.
    const sideRate = Math.max(1, Math.min(halfRate, throughControl.perSecond / 2));
    const latencyControl = await openLoop(sideRate, plan.latencyS, healthyOnce);
    const controlSent = await control.stop();

    // A hook whose receiver never answers: its attempts hold connections until the 100 s timeout.
    ctx.log(`webhooks: a hung receiver gets ${plan.hungRate} events/s`);
    const hungLoad = background(hungHook);
    // Let it fill its per-hook cap before measuring.
    const fillDeadline = Date.now() + 30_000;
    while (hung.openConnections() < 20 && Date.now() < fillDeadline) await sleep(250);
    const hungHeldAtStart = hung.openConnections();
    ctx.log(`webhooks: throughput and latency with the hung receiver (${hungHeldAtStart} connections held)`);
    const mHung = await cpu.measureCpu(pids, () => closedLoop(plan.concurrency, plan.throughputS, healthyOnce));
    const throughHung = { ...mHung.result, cpu: cpu.cpuCost(mHung, mHung.result.done, ctx.cores) };
    const latencyHung = await openLoop(sideRate, plan.latencyS, healthyOnce);
    const hungHeldAtEnd = hung.openConnections();
    const hungSent = await hungLoad.stop();
    loads.push(['after the hung-receiver passes', os.loadavg()]);
    result.profiles = (await gw.stopProfiles('webhooks')).map((p) => ({ ...p, pass: 'throughput and latency passes' }));
    const crashed = gw.crashed();
    if (crashed.length) throw new Error(crashed.join('\n'));

    // The two delivery models on the comparison worker (the product worker idles meanwhile). Last, so the events they
    // store do not slow the passes above; the hung hook's open attempts end within its timeout meanwhile.
    const models = await comparison.run({ tenantId: creds.tenantId, hooks: compareHooks, receiver: healthy, plan });
    await comparison.stop();
    loads.push(['after the model comparison', os.loadavg()]);

    for (const [name, r] of [
      ['baseline', baseline],
      ['throughput', through],
      ['latency', latency],
      ['throughput, second receiver', throughControl],
      ['latency, second receiver', latencyControl],
      ['throughput, hung receiver', throughHung],
      ['latency, hung receiver', latencyHung],
    ]) {
      if (r.failed) result.problems.push(`${name}: ${r.failed} failed (${r.firstError})`);
    }
    for (const r of models) if (r.failed) result.problems.push(`${r.label}: ${r.failed} events failed (${r.firstError})`);

    result.tables.push({
      title: 'Passes (latency: event sent to the API → delivery received; baseline: workflow start → result)',
      header: ['pass', 'per second', 'done', 'p50', 'p90', 'p99', 'max'],
      rows: [
        [`baseline: no-op workflow + activity, ${plan.concurrency} loops`, fmt(baseline.perSecond, 1), String(baseline.done), baseline.latency.p50, baseline.latency.p90, baseline.latency.p99, baseline.latency.max],
        [`deliveries, ${plan.concurrency} loops`, fmt(through.perSecond, 1), String(through.done), through.latency.p50, through.latency.p90, through.latency.p99, through.latency.max],
        [`deliveries at ${fmt(halfRate, 1)}/s (open loop)`, fmt(halfRate, 1), String(latency.done), latency.latency.p50, latency.latency.p90, latency.latency.p99, latency.latency.max],
        [`deliveries, ${plan.concurrency} loops, + ${plan.hungRate}/s to a second receiver`, fmt(throughControl.perSecond, 1), String(throughControl.done), throughControl.latency.p50, throughControl.latency.p90, throughControl.latency.p99, throughControl.latency.max],
        [`deliveries at ${fmt(sideRate, 1)}/s, + ${plan.hungRate}/s to a second receiver`, fmt(sideRate, 1), String(latencyControl.done), latencyControl.latency.p50, latencyControl.latency.p90, latencyControl.latency.p99, latencyControl.latency.max],
        [`deliveries, ${plan.concurrency} loops, + ${plan.hungRate}/s to a hung receiver`, fmt(throughHung.perSecond, 1), String(throughHung.done), throughHung.latency.p50, throughHung.latency.p90, throughHung.latency.p99, throughHung.latency.max],
        [`deliveries at ${fmt(sideRate, 1)}/s, + ${plan.hungRate}/s to a hung receiver`, fmt(sideRate, 1), String(latencyHung.done), latencyHung.latency.p50, latencyHung.latency.p90, latencyHung.latency.p99, latencyHung.latency.max],
      ],
    });
    result.figures.push(
      { id: 'webhook-baseline-wps', label: 'baseline workflows per second (one no-op activity)', value: Number(fmt(baseline.perSecond, 1)), unit: 'wf/s' },
      { id: 'webhook-deliveries-ps', label: 'webhook deliveries per second, healthy receiver', value: Number(fmt(through.perSecond, 1)), unit: '/s' },
      { id: 'webhook-latency-p50', label: `event→delivery p50 at ${fmt(halfRate, 1)}/s`, value: latency.latency.p50, unit: 'ms' },
      { id: 'webhook-latency-p99', label: `event→delivery p99 at ${fmt(halfRate, 1)}/s`, value: latency.latency.p99, unit: 'ms' },
      { id: 'webhook-deliveries-ps-hung', label: 'webhook deliveries per second, with a hung receiver', value: Number(fmt(throughHung.perSecond, 1)), unit: '/s' },
      { id: 'webhook-latency-p50-hung', label: 'event→delivery p50, with a hung receiver', value: latencyHung.latency.p50, unit: 'ms' },
      { id: 'webhook-latency-p99-hung', label: 'event→delivery p99, with a hung receiver', value: latencyHung.latency.p99, unit: 'ms' },
    );
    const cpuRow = (label, r) => {
      const c = r.cpu;
      if (!c) return [label, '-', '-', '-', '-', '-', '-', '-'];
      const ms = (k) => (c.perRequestMs[k] === undefined ? '-' : fmt(c.perRequestMs[k], 1));
      return [label, ms('api'), ms('worker'), ms('database'), ms('temporal'), ms('loadGenerator'), `${fmt(100 * c.machineBusyShare)}%`, `${fmt(100 * c.othersShare)}%`];
    };
    result.tables.push({
      title: 'CPU ms per delivery (per workflow for the baseline) by process; "bench" = receivers, event producer and baseline client',
      header: ['pass', 'API', 'worker', 'database', 'Temporal', 'bench', 'machine busy', 'other programs'],
      rows: [cpuRow('baseline', baseline), cpuRow('deliveries', through), cpuRow('deliveries, second receiver', throughControl), cpuRow('deliveries, hung receiver', throughHung)],
    });
    result.tables.push(...comparisonTables(models, plan));
    for (const r of models) {
      const key = `webhook-model-${r.model === 'fan-out' ? 'fanout' : 'perhook'}-${r.hooksPerEvent}`;
      result.figures.push(
        { id: `${key}-deliveries-ps`, label: `${r.label}: deliveries per second`, value: Number(fmt(r.deliveriesPerSecond, 1)), unit: '/s' },
        { id: `${key}-latency-p99`, label: `${r.label}: p99 store→delivery at ${fmt(r.halfRateEvents, 1)} events/s`, value: r.latency.p99, unit: 'ms' },
        { id: `${key}-history-per-delivery`, label: `${r.label}: Temporal history events per delivery`, value: Number(fmt(r.historyEventsPerDelivery, 1)), unit: '' },
      );
    }
    const ratio = through.perSecond / baseline.perSecond;
    const change = (a, b) => Math.abs(b - a) / a;
    const effects = (ref) => [change(ref.t.perSecond, throughHung.perSecond), change(ref.l.latency.p50, latencyHung.latency.p50), change(ref.l.latency.p99, latencyHung.latency.p99)];
    const worst = Math.max(...effects({ t: throughControl, l: latencyControl }));
    const worstVsAlone = Math.max(...effects({ t: through, l: latency }));
    const pct = (v) => Math.round(v * 1000) / 10;
    result.targets.push(
      {
        id: 'webhook-vs-baseline',
        label: 'delivery throughput short of the baseline (target: at least 60 % of it)',
        measured: pct(1 - ratio),
        unit: '%',
        target: 40,
        pass: ratio >= 0.6,
      },
      { id: 'webhook-p99', label: `p99 event→delivery at half the rate (${fmt(halfRate, 1)}/s)`, measured: latency.latency.p99, unit: 'ms', target: 1000, pass: latency.latency.p99 < 1000 },
      {
        id: 'webhook-hung-effect',
        label: 'largest change a hung receiver causes in those figures (against the same event load to a healthy one)',
        measured: pct(worst),
        unit: '%',
        target: 10,
        pass: worst <= 0.1,
      },
    );
    result.notes.push(
      `delivery throughput is ${fmt(ratio * 100)} % of the baseline`,
      `hung receiver against the control (throughput, p50, p99): ${effects({ t: throughControl, l: latencyControl }).map((v) => `${fmt(v * 100, 1)} %`).join(', ')}; ` +
        `against the healthy receiver alone: ${effects({ t: through, l: latency }).map((v) => `${fmt(v * 100, 1)} %`).join(', ')} (largest ${fmt(worstVsAlone * 100, 1)} %)`,
      `second healthy receiver: ${controlSent} events at ${plan.hungRate}/s; hung receiver: ${hungSent} events at ${plan.hungRate}/s, connections held ${hungHeldAtStart} at the start of its passes and ${hungHeldAtEnd} at the end (cap WEBHOOK_MAX_CONCURRENCY_PER_HOOK=20, timeout 100 s)`,
      'events are produced through POST /api/v1/hook/{id}/ping (API → publishEvent → deliverWebhook workflow → signed POST); receivers on 127.0.0.1 answer 204',
      `healthy receiver requests: ${healthy.requests()}`,
      `load average (1, 5, 15 min) on ${ctx.cores} cores: ${loads.map(([when, l]) => `${when} ${l.map((v) => v.toFixed(1)).join(' / ')}`).join('; ')}`,
      'model comparison: events stored by the benchmark with the product\'s EventRepository, runs started as the publisher starts them (per hook) or as one run per event (fan-out); both on one worker process of the gateway\'s own composition on its own task queue, hooks on the same healthy receiver; history events from a sample of closed runs (describe().historyLength)',
    );
    return result;
  } finally {
    agent.destroy();
    await comparison.stop().catch(() => {});
    await gw.stop();
    await healthy.close();
    await second.close();
    await hung.close();
    if (ctx.svc.providers.database === 'env') await gateway.dropDatabase(ctx.svc.mongodbUri, gw.dbName).catch(() => {});
  }
}

module.exports = {
  name: 'webhooks',
  title: 'Webhook delivery: baseline workflow, deliveries per second, event→delivery latency, with and without a hung receiver',
  run,
};
