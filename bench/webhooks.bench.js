'use strict';
// Webhook delivery benchmark against the real API and worker processes on the local Temporal dev server:
// - baseline: workflows per second of a workflow with one no-op activity (the engine's ceiling on this machine),
//   measured right before and right after the delivery pass; the deliveries are judged against the mean of the two;
// - deliveries per second to a healthy receiver on 127.0.0.1 (closed loop: event produced through the API's ping
//   endpoint, which runs the one publishEvent path, then delivered, signed, by a deliverWebhook workflow);
// - p50/p99 event→delivery latency at half that rate (open loop, long enough for 400 deliveries in the full plan);
// - the same three figures while a second hook gets events at a low rate, with a healthy receiver (the control: the
//   same extra event load) and with a receiver that never answers (its hook's attempts hang until a 10 s timeout, so
//   every pass sees the timeouts, the narrowed per-hook cap and the parked deliveries of a receiver that stays hung),
//   in blocks of two passes run alike for both conditions (a fresh hook, its load settling first, its runs ended
//   after), in rounds of control then hung, then hung then control (three rounds in the full plan). The hung
//   receiver's own effect is the mean of its passes against the mean of the controls (open-loop latencies pooled),
//   which cancels a drift of the run; judged is the harm it does (a lower rate, a higher latency), the change either
//   way printed with the first and last controls' own difference. BENCH_WEBHOOKS_HUNG_ANSWERS=1 makes the "hung"
//   receiver answer, an A/A check of what the design measures when there is nothing to find;
// - the two delivery models side by side on one worker of their own (bench/lib/delivery-models.js): one run per
//   (event, hook), the product's, against one run per event fanning out to its hooks, with 1 and 3 hooks per event.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const http = require('node:http');
const path = require('node:path');
const gateway = require('./lib/gateway');
const { apiCall } = gateway;
const { closedLoop, openLoop } = require('./lib/loops');
const cpu = require('./lib/cpu');
const { startStallMonitor, readStallFile, startCpuTimeline, readGoGcTrace } = require('./lib/stalls');
const { explainSlow } = require('./lib/slow-stretches');
const { readCounters, ratesBetween, largestDifferences } = require('./lib/server-metrics');
const { prepareComparison, comparisonTables } = require('./lib/delivery-models');
const { startNoopWorker } = require('./lib/noop-worker-process');
const { startReceiver } = require('./lib/receiver');
const services = require('../scripts/lib/services');

const ROOT = services.REPO_ROOT;
const HOST = '127.0.0.1';
const KEY = 'benchmark-secure-key-0123456789';
// The default limit (6000 per client per minute) would turn the closed loop into a 429 test.
const API_RATE_LIMIT = '1000000000';
const DELIVERY_WAIT_MS = 60_000;

// minSamples: open-loop deliveries behind the judged p99 at half the rate; sideSamples: per side pass (six pooled per
// condition in three rounds: a p99 of ~800 values moved by ±20 % between two controls of one run, so the hung
// receiver's 10 % is judged on about 4 800); maxLatencyS caps an open-loop pass when the rate is low. sideThroughputS: closed-loop length
// of the side passes (longer than the main one: their rates are compared with each other, and 30 s passes still
// differed by 12 % with nothing changed). hungTimeoutS: the hung hook's own attempt timeout; hungSettleS: how long a block's load runs before its
// first pass (for the hung hook three timeouts: its cap has narrowed and its throttled deliveries come back, its steady state).
const PLANS = {
  full: {
    concurrency: 20,
    warmupS: 5,
    throughputS: 20,
    sideThroughputS: 45,
    latencyS: 20,
    minSamples: 400,
    sideSamples: 800,
    maxLatencyS: 60,
    hungRate: 2,
    hungTimeoutS: 10,
    hungSettleS: 30,
    rounds: 3,
    compareS: 12,
  },
  quick: {
    concurrency: 10,
    warmupS: 2,
    throughputS: 5,
    sideThroughputS: 5,
    latencyS: 5,
    minSamples: 0,
    sideSamples: 0,
    maxLatencyS: 5,
    hungRate: 2,
    hungTimeoutS: 5,
    hungSettleS: 5,
    rounds: 1,
    compareS: 4,
  },
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

/**
 * Open-loop length: at least `plan.latencyS`, longer when that gives fewer than `samples` deliveries at `rate` (a p99
 * of fewer than ~400 values moves with a handful of slow ones), at most `plan.maxLatencyS`.
 */
function openLoopSeconds(plan, rate, samples) {
  return Math.min(plan.maxLatencyS, Math.max(plan.latencyS, Math.ceil(samples / rate)));
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { scenarios: [], figures: [], targets: [], notes: [], problems: [], tables: [] };
  const { Client, Connection } = require('@temporalio/client');
  const { deliveryIdFor } = require(path.join(ROOT, 'dist', 'src', 'webhooks', 'delivery-id.js'));
  const { deliverWebhookWorkflowId } = require(path.join(ROOT, 'dist', 'workflows', 'contracts', 'deliver-webhook.js'));
  const { summarize } = require('./lib/load');

  // The engine's ceiling: a workflow with one no-op activity on the same server. Its worker stays up (idle between
  // its passes), so the baseline is measured both before and after the deliveries on the same server state.
  const noopQueue = `bench-noop-${crypto.randomUUID()}`;
  const noopWorker = startNoopWorker({
    temporalAddress: ctx.svc.temporalAddress,
    taskQueue: noopQueue,
    logFile: path.join(ctx.logDir, 'webhooks-noop-worker.log'),
  });
  const connection = await Connection.connect({ address: ctx.svc.temporalAddress });
  const client = new Client({ connection });
  const noopOnce = async () => {
    const t = performance.now();
    await client.workflow.execute('benchNoop', {
      taskQueue: noopQueue,
      workflowId: `bench-noop-${crypto.randomUUID()}`,
    });
    return performance.now() - t;
  };

  const healthy = await startReceiver({ hang: false, arrivalWaitMs: DELIVERY_WAIT_MS });
  const second = await startReceiver({ hang: false, arrivalWaitMs: DELIVERY_WAIT_MS });
  // BENCH_WEBHOOKS_HUNG_ANSWERS=1: an A/A check of the design. The "hung" receiver answers like the healthy ones, so
  // its passes differ from the controls only by their place in the rounds, the settling before them and a fresh hook;
  // the harm figure is then what the design measures when the hung receiver does nothing, its noise floor.
  const aaCheck = process.env.BENCH_WEBHOOKS_HUNG_ANSWERS === '1';
  const hung = await startReceiver({ hang: !aaCheck, arrivalWaitMs: DELIVERY_WAIT_MS });
  // Stalls of the API and worker (written by their preloaded hook) and of this process, which runs the receivers.
  const stallFile = path.join(ctx.logDir, `webhooks-stalls-${process.pid}.jsonl`);
  const benchStalls = startStallMonitor({ name: 'bench' });
  let cpuTimeline;
  ctx.log('webhooks: starting API and worker, and the baseline worker');
  const gw = await gateway.startGateway({
    stallFile,
    svc: ctx.svc,
    logDir: ctx.logDir,
    label: 'webhooks',
    env: {
      RATE_LIMIT_API_PER_MINUTE: API_RATE_LIMIT,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
    },
    cpuProfileDir: ctx.cpuProfileDir,
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: plan.concurrency * 4 });
  // Its worker bundles its workflows at start: started now and awaited before any pass, so that costs no figure.
  const comparison = prepareComparison({ ctx, gw });
  const loads = [['start of the suite', os.loadavg()]];
  let noopStopped = false;
  try {
    await noopWorker.ready();
    const creds = await gateway.seedTenant(gw);
    const token = await gateway.fetchToken(gw, creds);
    const hook = async (topic, url, extra = {}) =>
      (
        await apiCall(agent, `${gw.url}/api/v1/hook`, {
          method: 'POST',
          token,
          body: { url, topic, secureKey: KEY, ...extra },
        })
      ).id;
    const healthyHook = await hook('BenchHealthy', healthy.url);
    const compareHooks = [];
    for (const t of ['BenchFanA', 'BenchFanB', 'BenchFanC']) compareHooks.push(await hook(t, healthy.url));
    ctx.log('webhooks: waiting for the comparison worker');
    await comparison.ready();

    const basePids = { worker: noopWorker.pid(), ...ctx.serverPids };
    const baselinePass = async (label) => {
      ctx.log(`webhooks: baseline (${label}), ${plan.concurrency} loops for ${plan.throughputS} s`);
      const m = await cpu.measureCpu(basePids, () => closedLoop(plan.concurrency, plan.throughputS, noopOnce));
      return { ...m.result, cpu: cpu.cpuCost(m, m.result.done, ctx.cores) };
    };

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
    const deliveryPass = async (seconds = plan.throughputS) => {
      const m = await cpu.measureCpu(pids, () => closedLoop(plan.concurrency, seconds, healthyOnce));
      return { ...m.result, cpu: cpu.cpuCost(m, m.result.done, ctx.cores) };
    };

    /** Pings a second hook at plan.hungRate per second until stopped; remembers the events it sent. */
    const background = (hookId) => {
      let stop = false;
      const events = [];
      const loop = (async () => {
        while (!stop) {
          apiCall(agent, `${gw.url}/api/v1/hook/${hookId}/ping`, { method: 'POST', token }).then(
            (r) => events.push(r.eventId),
            () => undefined,
          );
          await sleep(1000 / plan.hungRate);
        }
      })();
      return {
        events,
        async stop() {
          stop = true;
          await loop;
          return events.length;
        },
      };
    };

    // Warm-ups first, then baseline / deliveries / baseline back to back: the deliveries are judged against the mean
    // of the two baselines, which cancels a steady drift of the server (Temporal's CPU per workflow grows as its
    // in-memory store fills) and of the machine's other load.
    ctx.log('webhooks: warm-up (baseline and deliveries)');
    await closedLoop(plan.concurrency, plan.warmupS, noopOnce);
    await closedLoop(plan.concurrency, plan.warmupS, healthyOnce);
    await gw.startProfiles();
    const baselineBefore = await baselinePass('before the deliveries');
    ctx.log(`webhooks: throughput, ${plan.concurrency} loops for ${plan.throughputS} s`);
    const through = await deliveryPass();
    const baselineAfter = await baselinePass('after the deliveries');
    await noopWorker.stop();
    noopStopped = true;
    const baselinePerSecond = mean([baselineBefore.perSecond, baselineAfter.perSecond]);

    const halfRate = Math.max(1, through.perSecond / 2);
    const mainSeconds = openLoopSeconds(plan, halfRate, plan.minSamples);
    ctx.log(`webhooks: latency at ${fmt(halfRate, 1)} events/s for ${mainSeconds} s`);
    const latency = await openLoop(halfRate, mainSeconds, healthyOnce);
    loads.push(['after the healthy passes', os.loadavg()]);
    cpuTimeline = startCpuTimeline(pids);

    // The hung receiver's effect: blocks of two passes with a second hook getting events at a low rate, its receiver
    // healthy (the control: the same extra event load) or hung. Every block is run the same way: a fresh hook, its
    // load started plan.hungSettleS before the first pass, its runs described and ended after the second, so the two
    // conditions differ only in what the second hook's receiver does. Judged as the mean of the hung passes against
    // the mean of the controls (latencies pooled); the first and last controls' own difference shows the run's noise.
    let sideRate;
    let sideSeconds;
    const sidePass = async (kind, index) => {
      const label = `${kind} ${index}`;
      const before = await readCounters(ctx.svc.temporalMetricsUrl);
      ctx.log(`webhooks: ${label}: ${plan.concurrency} loops for ${plan.sideThroughputS} s`);
      const t = await deliveryPass(plan.sideThroughputS);
      if (sideRate === undefined) {
        // On FerretDB the database's cost per delivery grows with the events stored, so the capacity measured first
        // may no longer hold: every side pass runs at half of the first control's capacity (if lower), so they
        // compare the hung receiver, not a queue that grows in all of them.
        sideRate = Math.max(1, Math.min(halfRate, t.perSecond / 2));
        sideSeconds = openLoopSeconds(plan, sideRate, plan.sideSamples);
      }
      ctx.log(`webhooks: ${label}: ${fmt(sideRate, 1)} events/s for ${sideSeconds} s`);
      const l = await openLoop(sideRate, sideSeconds, healthyOnce);
      // The Temporal server's counters over the whole side pass (closed and open loop), per second.
      const serverRates = ratesBetween(before, await readCounters(ctx.svc.temporalMetricsUrl));
      return { label, t, l, serverRates };
    };

    // Blocks in rounds of control, hung / hung, control / control, hung ...: each condition runs first in alternate
    // rounds, and more rounds cancel a drift of the machine that is not steady, which one round cannot.
    const controlPasses = [];
    const hungPasses = [];
    const sides = [];
    const hungStats = {
      sent: 0,
      heldMax: 0,
      heldAtStart: [],
      heldAtEnd: [],
      attemptsInPasses: 0,
      history: [],
      heldRemoved: 0,
    };
    let controlSent = 0;
    const block = async (kind) => {
      const receiver = kind === 'hung' ? hung : second;
      // A fresh hook each block, the same attempt timeout for both, so every block starts from the same state (no
      // narrowed cap, nothing parked).
      const hookId = await hook(kind === 'hung' ? 'BenchHung' : 'BenchSecond', receiver.url, {
        timeoutSeconds: plan.hungTimeoutS,
      });
      const passes = kind === 'hung' ? hungPasses : controlPasses;
      // The hung hook's load runs for three timeouts before measuring, so its passes see a receiver that stays hung
      // (cap narrowed by the timeouts, deliveries parked, one attempt timing out after another), not only its first
      // seconds; the control's load runs as long before its passes.
      ctx.log(
        `webhooks: ${kind}: ${kind === 'hung' ? `a hung receiver (hook timeout ${plan.hungTimeoutS} s)` : 'a second healthy receiver'} gets ${plan.hungRate} events/s; ${plan.hungSettleS} s before measuring`,
      );
      const load = background(hookId);
      const heldProbe =
        kind === 'hung'
          ? setInterval(() => (hungStats.heldMax = Math.max(hungStats.heldMax, hung.openConnections())), 250)
          : undefined;
      await sleep(plan.hungSettleS * 1000);
      const attemptsAtStart = hung.requests();
      if (kind === 'hung') {
        hungStats.heldAtStart.push(hung.openConnections());
        ctx.log(
          `webhooks: hung passes (${hung.openConnections()} connections held, ${attemptsAtStart} attempts so far)`,
        );
      }
      for (let i = 0; i < 2; i++) {
        const x = await sidePass(kind, passes.length + 1);
        passes.push(x);
        sides.push(x);
      }
      clearInterval(heldProbe);
      if (kind === 'hung') {
        hungStats.heldAtEnd.push(hung.openConnections());
        hungStats.attemptsInPasses += hung.requests() - attemptsAtStart;
      }
      const sent = await load.stop();
      const runIds = load.events.map((eventId) =>
        deliverWebhookWorkflowId(creds.tenantId, deliveryIdFor(eventId, hookId)),
      );
      // What the hung hook's runs did: a run that parked once and never came back has about 11 history events (start,
      // one workflow task, the throttled attempt, a second workflow task, the timer); each return adds about ten.
      const history = await Promise.all(
        runIds.map((id) =>
          client.workflow
            .getHandle(id)
            .describe()
            .then(
              (d) => d.historyLength,
              () => undefined,
            ),
        ),
      );
      // The block's deliveries end before the next block: runs still open (the hung hook's) are terminated and the
      // held connections closed, so the next block does not carry this one's work. The control's runs have closed;
      // the calls are made all the same, so both conditions end alike.
      ctx.log(`webhooks: ending the ${kind} hook's ${runIds.length} deliveries`);
      await Promise.all(
        runIds.map((id) =>
          client.workflow
            .getHandle(id)
            .terminate(`benchmark: ${kind} passes over`)
            .catch(() => undefined),
        ),
      );
      // The hung hook's deliveries held in the database (their runs ended) go too, or the worker's sweep would start
      // them in a later block when they fall due.
      const unheld = await gateway.withDatabase(ctx.svc.mongodbUri, gw.dbName, (db) =>
        db.collection('helddeliveries').deleteMany({ hookId }),
      );
      if (kind === 'hung') hungStats.heldRemoved += unheld?.deletedCount ?? 0;
      receiver.dropConnections();
      if (kind === 'hung') {
        hungStats.sent += sent;
        hungStats.history.push(...history.filter((x) => x !== undefined));
      } else controlSent += sent;
      await sleep(3_000);
    };
    for (let round = 1; round <= plan.rounds; round++) {
      const order = round % 2 === 1 ? ['control', 'hung'] : ['hung', 'control'];
      for (const kind of order) await block(kind);
    }
    loads.push(['after the control and hung-receiver blocks', os.loadavg()]);
    const cpuSamples = cpuTimeline.stop();
    result.profiles = (await gw.stopProfiles('webhooks')).map((p) => ({ ...p, pass: 'throughput and latency passes' }));
    const crashed = gw.crashed();
    if (crashed.length) throw new Error(crashed.join('\n'));

    // The two delivery models on the comparison worker (the product worker idles meanwhile). Last, so the events they
    // store do not slow the passes above.
    const models = await comparison.run({ tenantId: creds.tenantId, hooks: compareHooks, receiver: healthy, plan });
    await comparison.stop();
    loads.push(['after the model comparison', os.loadavg()]);

    for (const [name, r] of [
      ['baseline before', baselineBefore],
      ['throughput', through],
      ['baseline after', baselineAfter],
      ['latency', latency],
      ...sides.flatMap((x) => [
        [`throughput, ${x.label}`, x.t],
        [`latency, ${x.label}`, x.l],
      ]),
    ]) {
      if (r.failed) result.problems.push(`${name}: ${r.failed} failed (${r.firstError})`);
    }
    for (const r of models)
      if (r.failed) result.problems.push(`${r.label}: ${r.failed} events failed (${r.firstError})`);

    const row = (label, perSecond, r) => [
      label,
      fmt(perSecond, 1),
      String(r.done),
      r.latency.p50,
      r.latency.p90,
      r.latency.p99,
      r.latency.max,
    ];
    const sideName = (x) =>
      x.label.startsWith('hung')
        ? `+ ${plan.hungRate}/s to a hung receiver (${x.label})`
        : `+ ${plan.hungRate}/s to a second healthy receiver (${x.label})`;
    result.tables.push({
      title:
        'Passes in the order they ran (latency: event sent to the API → delivery received; baseline: workflow start → result)',
      header: ['pass', 'per second', 'done', 'p50', 'p90', 'p99', 'max'],
      rows: [
        row(
          `baseline before: no-op workflow + activity, ${plan.concurrency} loops`,
          baselineBefore.perSecond,
          baselineBefore,
        ),
        row(`deliveries, ${plan.concurrency} loops`, through.perSecond, through),
        row(
          `baseline after: no-op workflow + activity, ${plan.concurrency} loops`,
          baselineAfter.perSecond,
          baselineAfter,
        ),
        row(`deliveries at ${fmt(halfRate, 1)}/s (open loop, ${mainSeconds} s)`, halfRate, latency),
        ...sides.flatMap((x) => [
          row(`deliveries, ${plan.concurrency} loops, ${sideName(x)}`, x.t.perSecond, x.t),
          row(`deliveries at ${fmt(sideRate, 1)}/s (${sideSeconds} s), ${sideName(x)}`, sideRate, x.l),
        ]),
      ],
    });

    // The judged figures of each condition: closed-loop rates averaged, open-loop latencies pooled.
    const condition = (passes) => {
      const pooled = summarize(passes.flatMap((x) => x.l.values));
      return {
        perSecond: mean(passes.map((x) => x.t.perSecond)),
        p50: pooled.p50,
        p99: pooled.p99,
        samples: pooled.count,
      };
    };
    const controls = condition(controlPasses);
    const hungs = condition(hungPasses);
    const signed = (a, b) => (b - a) / a;
    const figuresOf = (c) => [c.perSecond, c.p50, c.p99];
    // Harm: a lower delivery rate, a higher p50 or p99. A hung hook cannot speed up another hook's deliveries, so a
    // change that way is the run's noise (printed below with the controls' own difference), not a move to judge.
    const harms = figuresOf(controls).map((a, i) => (i === 0 ? -1 : 1) * signed(a, figuresOf(hungs)[i]));
    const worst = Math.max(0, ...harms);
    const firstControl = controlPasses[0];
    const lastControl = controlPasses[controlPasses.length - 1];
    const controlDrift = figuresOf(condition([firstControl])).map((a, i) =>
      signed(a, figuresOf(condition([lastControl]))[i]),
    );
    result.tables.push({
      title:
        'Hung receiver, as judged: closed-loop rate = mean of the passes; p50/p99 = of the open-loop passes pooled',
      header: ['condition', 'deliveries/s', 'p50 ms', 'p99 ms', 'open-loop samples'],
      rows: [
        [
          `controls (${controlPasses.length} passes, in blocks of two run as the hung ones are)`,
          fmt(controls.perSecond, 1),
          fmt(controls.p50),
          fmt(controls.p99),
          String(controls.samples),
        ],
        [
          `hung receiver (${hungPasses.length} passes)`,
          fmt(hungs.perSecond, 1),
          fmt(hungs.p50),
          fmt(hungs.p99),
          String(hungs.samples),
        ],
      ],
    });

    // Every side pass's deliveries slower than the controls' p99, in stretches, each lined up with the processes'
    // event-loop stalls, GC pauses and cores at the time (and, in hung passes, the hung receiver's requests), so a
    // slow stretch can be told apart: the hung hook's work, a stall of one process, or the machine.
    const goGcs = (file, pid, name) => (pid ? readGoGcTrace(path.join(ctx.svc.logDir, file), pid, name) : []);
    const stalls = [
      ...readStallFile(stallFile),
      ...benchStalls.records,
      ...goGcs('temporal.log', ctx.serverPids.temporal, 'temporal'),
      // On the PostgreSQL backend the entry lists FerretDB first, then the PostgreSQL server.
      ...goGcs('ferretdb.log', [].concat(ctx.serverPids.database)[0], 'database'),
    ];
    const hungRequests = (x, from, to) => {
      if (!x.label.startsWith('hung')) return '';
      const t0 = performance.timeOrigin;
      const at = hung.requestsBetween(from - t0 - 1000, to - t0).map((t) => fmt((t + t0 - from) / 1000, 1));
      return `hung receiver requests at s ${at.join(', ') || '-'} from the stretch's start`;
    };
    const withRates = (passes) => passes.map((x) => x.serverRates).filter(Boolean);
    if (withRates(controlPasses).length && withRates(hungPasses).length) {
      result.tables.push({
        title:
          'Temporal server: the counters that moved most differently with the hung receiver (mean per second over each side pass, its /metrics endpoint)',
        header: ['series', 'controls /s', 'hung /s', 'difference /s'],
        rows: largestDifferences(withRates(controlPasses), withRates(hungPasses), 15).map((r) => [
          r.key.slice(0, 160),
          fmt(r.a, 2),
          fmt(r.b, 2),
          `${r.diff >= 0 ? '+' : ''}${fmt(r.diff, 2)}`,
        ]),
      });
    }
    const slowStretches = explainSlow({
      passes: sides,
      thresholdMs: controls.p99,
      stalls,
      cpuSamples,
      extra: hungRequests,
    });
    fs.writeFileSync(
      path.join(ctx.logDir, `webhooks-side-passes-${process.pid}.json`),
      JSON.stringify({
        timeOrigin: performance.timeOrigin,
        sides: sides.map((x) => ({ label: x.label, startedAt: x.l.startedAt, timeline: x.l.timeline })),
        stalls,
        cpuSamples,
        hungRequests: hung.requestsBetween(0, Infinity),
      }),
    );
    const hungHistory = hungStats.history;
    const historyMean = hungHistory.length ? mean(hungHistory) : NaN;

    result.figures.push(
      {
        id: 'webhook-baseline-wps',
        label: 'baseline workflows per second (one no-op activity; mean of the passes before and after the deliveries)',
        value: Number(fmt(baselinePerSecond, 1)),
        unit: 'wf/s',
      },
      {
        id: 'webhook-deliveries-ps',
        label: 'webhook deliveries per second, healthy receiver',
        value: Number(fmt(through.perSecond, 1)),
        unit: '/s',
      },
      {
        id: 'webhook-latency-p50',
        label: `event→delivery p50 at ${fmt(halfRate, 1)}/s`,
        value: latency.latency.p50,
        unit: 'ms',
      },
      {
        id: 'webhook-latency-p99',
        label: `event→delivery p99 at ${fmt(halfRate, 1)}/s (${latency.latency.count} deliveries)`,
        value: latency.latency.p99,
        unit: 'ms',
      },
      {
        id: 'webhook-deliveries-ps-hung',
        label: `webhook deliveries per second, with a hung receiver (mean of ${hungPasses.length} passes)`,
        value: Number(fmt(hungs.perSecond, 1)),
        unit: '/s',
      },
      {
        id: 'webhook-latency-p50-hung',
        label: `event→delivery p50, with a hung receiver (${hungPasses.length} passes pooled)`,
        value: hungs.p50,
        unit: 'ms',
      },
      {
        id: 'webhook-latency-p99-hung',
        label: `event→delivery p99, with a hung receiver (${hungPasses.length} passes pooled)`,
        value: hungs.p99,
        unit: 'ms',
      },
    );
    const cpuRow = (label, r) => {
      const c = r.cpu;
      if (!c) return [label, '-', '-', '-', '-', '-', '-', '-'];
      const ms = (k) => (c.perRequestMs[k] === undefined ? '-' : fmt(c.perRequestMs[k], 1));
      return [
        label,
        ms('api'),
        ms('worker'),
        ms('database'),
        ms('temporal'),
        ms('loadGenerator'),
        `${fmt(100 * c.machineBusyShare)}%`,
        `${fmt(100 * c.othersShare)}%`,
      ];
    };
    result.tables.push({
      title:
        'CPU ms per delivery (per workflow for the baseline) by process, closed-loop passes in the order they ran; "bench" = receivers, event producer and baseline client',
      header: ['pass', 'API', 'worker', 'database', 'Temporal', 'bench', 'machine busy', 'other programs'],
      rows: [
        cpuRow('baseline before', baselineBefore),
        cpuRow('deliveries', through),
        cpuRow('baseline after', baselineAfter),
        ...sides.map((x) => cpuRow(`deliveries, ${x.label}`, x.t)),
      ],
    });
    result.tables.push(...comparisonTables(models, plan));
    for (const r of models) {
      const key = `webhook-model-${r.model === 'fan-out' ? 'fanout' : 'perhook'}-${r.hooksPerEvent}`;
      result.figures.push(
        {
          id: `${key}-deliveries-ps`,
          label: `${r.label}: deliveries per second`,
          value: Number(fmt(r.deliveriesPerSecond, 1)),
          unit: '/s',
        },
        {
          id: `${key}-latency-p99`,
          label: `${r.label}: p99 store→delivery at ${fmt(r.halfRateEvents, 1)} events/s`,
          value: r.latency.p99,
          unit: 'ms',
        },
        {
          id: `${key}-history-per-delivery`,
          label: `${r.label}: Temporal history events per delivery`,
          value: Number(fmt(r.historyEventsPerDelivery, 1)),
          unit: '',
        },
      );
    }
    const ratio = through.perSecond / baselinePerSecond;
    const pct = (v) => Math.round(v * 1000) / 10;
    const pctText = (v) => `${v >= 0 ? '+' : ''}${fmt(v * 100, 1)} %`;
    result.targets.push(
      {
        id: 'webhook-vs-baseline',
        label:
          'delivery throughput short of the baseline (mean of the baseline passes before and after; target: at least 60 % of it)',
        measured: pct(1 - ratio),
        unit: '%',
        target: 40,
        pass: ratio >= 0.6,
      },
      {
        id: 'webhook-p99',
        label: `p99 event→delivery at half the rate (${fmt(halfRate, 1)}/s, ${latency.latency.count} deliveries)`,
        measured: latency.latency.p99,
        unit: 'ms',
        target: 1000,
        pass: latency.latency.p99 < 1000,
      },
      {
        id: 'webhook-hung-effect',
        label: `largest harm a hung receiver does to those figures (rate lower or latency higher; ${hungPasses.length} hung passes against ${controlPasses.length} controls with the same event load to a healthy receiver)`,
        measured: pct(worst),
        unit: '%',
        target: 10,
        pass: worst <= 0.1,
      },
    );
    if (aaCheck)
      result.notes.push(
        'A/A CHECK (BENCH_WEBHOOKS_HUNG_ANSWERS=1): the "hung" receiver answered every request at once; its figures measure the design, not a hung receiver',
      );
    result.notes.push(
      `judged: delivery throughput ${fmt(through.perSecond, 1)}/s against the mean of the baseline before (${fmt(baselineBefore.perSecond, 1)} wf/s) and after (${fmt(baselineAfter.perSecond, 1)} wf/s) = ${fmt(baselinePerSecond, 1)} wf/s: ${fmt(ratio * 100)} % (the baseline moved ${pctText(signed(baselineBefore.perSecond, baselineAfter.perSecond))} from before to after)`,
      `judged: p99 at half the rate from ${latency.latency.count} deliveries in ${mainSeconds} s`,
      `judged: hung receiver (${hungPasses.length} passes, ${hungs.samples} open-loop deliveries) against the controls (${controlPasses.length} passes, ${controls.samples} deliveries), order ${sides.map((x) => x.label).join(', ')}: ` +
        `throughput ${fmt(controls.perSecond, 1)} → ${fmt(hungs.perSecond, 1)}/s (${pctText(signed(controls.perSecond, hungs.perSecond))}), ` +
        `p50 ${fmt(controls.p50)} → ${fmt(hungs.p50)} ms (${pctText(signed(controls.p50, hungs.p50))}), p99 ${fmt(controls.p99)} → ${fmt(hungs.p99)} ms (${pctText(signed(controls.p99, hungs.p99))})`,
      `noise: ${lastControl.label} against ${firstControl.label} (throughput, p50, p99): ${controlDrift.map(pctText).join(', ')}; a hung-receiver change within that is the run's drift, not the hung receiver`,
      `second healthy receiver: ${controlSent} events at ${plan.hungRate}/s; hung receiver (${plan.rounds} round(s), a fresh hook each): ${hungStats.sent} events at ${plan.hungRate}/s, hook timeout ${plan.hungTimeoutS} s, connections held at most ${hungStats.heldMax}, ${hungStats.heldAtStart.join('/')} at the start of its passes and ${hungStats.heldAtEnd.join('/')} at the end (cap WEBHOOK_MAX_CONCURRENCY_PER_HOOK=20, narrowed by timeouts), ${hungStats.attemptsInPasses} attempts reached it during its passes; its runs were terminated and its connections closed before the next control`,
      `hung hook's runs at the end of its passes: ${hungHistory.length} described, history events per run mean ${fmt(historyMean, 1)}, max ${hungHistory.length ? Math.max(...hungHistory) : 'n/a'} (about 13 for a delivery held in the database at its first try: the attempt, the hold and the run's end); ${hungStats.heldRemoved} deliveries were still held when its blocks ended`,
      ...slowStretches,
      'events are produced through POST /api/v1/hook/{id}/ping (API → publishEvent → deliverWebhook workflow → signed POST); receivers on 127.0.0.1 answer 204',
      `healthy receiver requests: ${healthy.requests()}`,
      `load average (1, 5, 15 min) on ${ctx.cores} cores: ${loads.map(([when, l]) => `${when} ${l.map((v) => v.toFixed(1)).join(' / ')}`).join('; ')}`,
      "model comparison: events stored by the benchmark with the product's EventRepository, runs started as the publisher starts them (per hook) or as one run per event (fan-out); both on one worker process of the gateway's own composition on its own task queue, hooks on the same healthy receiver; history events from a sample of closed runs (describe().historyLength)",
    );
    return result;
  } finally {
    benchStalls.stop();
    if (cpuTimeline) cpuTimeline.stop();
    agent.destroy();
    if (!noopStopped) await noopWorker.stop().catch(() => {});
    await connection.close().catch(() => {});
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
  title:
    'Webhook delivery: baseline workflow, deliveries per second, event→delivery latency, with and without a hung receiver',
  run,
};
