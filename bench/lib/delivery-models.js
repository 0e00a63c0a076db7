'use strict';
// The webhook benchmark's comparison of the two delivery models on one worker:
// - per hook: one deliverWebhook run per (event, hook), started as the product's publisher starts them
//   (TemporalDeliveryStarter, the runs of one event started together);
// - fan-out: one deliverEventFanOut run per event (bench/lib/fanout-workflows.js), delivering to all its hooks.
// Each event is stored first (the product's EventRepository, as publishEvent does), then its run(s) start; latency
// is from the store to each delivery's arrival at the receiver. Both models use the comparison worker
// (bench/lib/compare-worker.js: the gateway's worker on a task queue of its own), the same hooks, the same receiver.

const crypto = require('node:crypto');
const path = require('node:path');
const cpu = require('./cpu');
const { closedLoop, openLoop, sleep } = require('./loops');
const services = require('../../scripts/lib/services');
const { startWorkerChild } = require('./worker-child');

const ROOT = services.REPO_ROOT;
const DIST = path.join(ROOT, 'dist', 'src');
const COMPARE_WORKER_JS = path.join(__dirname, 'compare-worker.js');
const WORKER_READY_TIMEOUT_MS = 180_000;
const DELIVERY_WAIT_MS = 60_000;
const HISTORY_SAMPLE = 20;

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

/** The comparison worker as a child process with the gateway's environment, on `taskQueue`. */
function startCompareWorker({ gw, logDir, taskQueue }) {
  const env = { ...gw.env, TEMPORAL_TASK_QUEUE: taskQueue };
  // The product worker already serves its metrics on that port.
  delete env.WORKER_METRICS_ADDRESS;
  return startWorkerChild({
    name: 'compare worker',
    script: COMPARE_WORKER_JS,
    env,
    logFile: path.join(logDir, 'webhooks-compare-worker.log'),
    readyPattern: /worker running/,
    readyTimeoutMs: WORKER_READY_TIMEOUT_MS,
  });
}

/**
 * Prepares the comparison: starts its worker (bundling takes a while, so callers start it early) and returns
 * { ready(), run(opts), stop() }.
 */
function prepareComparison({ ctx, gw }) {
  const taskQueue = `bench-compare-${crypto.randomUUID()}`;
  const worker = startCompareWorker({ gw, logDir: ctx.logDir, taskQueue });

  /**
   * Runs both models with 1 and with `hookCounts` hooks per event. `hooks`: ids of hooks (all pointing at `receiver`)
   * in the tenant `tenantId`; `plan`: { concurrency, warmupS, compareS }.
   */
  async function run({ tenantId, hooks, receiver, plan, hookCounts = [1, 3] }) {
    const { Client, Connection } = require('@temporalio/client');
    const { defineSearchAttributeKey } = require('@temporalio/common');
    const { loadConfig } = require(path.join(DIST, 'config', 'load-config'));
    const { connectDatabase } = require(path.join(DIST, 'storage', 'connection'));
    const { EventRepository } = require(path.join(DIST, 'storage', 'events', 'event.repository'));
    const { toGatewayEvent } = require(path.join(DIST, 'webhooks', 'event-payload'));
    const { TemporalDeliveryStarter } = require(path.join(DIST, 'main', 'webhooks'));
    const { deliveryIdFor } = require(path.join(DIST, 'webhooks', 'delivery-id'));
    const { DELIVERY_SEARCH_ATTRIBUTES, deliverWebhookWorkflowId } = require(
      path.join(DIST, '..', 'workflows', 'contracts', 'deliver-webhook'),
    );

    // The same settings the gateway's publisher passes (retry schedule, attempt timeout, search attributes).
    const config = loadConfig({ ...gw.env, TEMPORAL_TASK_QUEUE: taskQueue });
    const db = await connectDatabase(ctx.svc.mongodbUri, { dbName: gw.dbName });
    const events = new EventRepository(db.models);
    const connection = await Connection.connect({ address: ctx.svc.temporalAddress });
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const searchAttributes = config.webhooks.searchAttributes;
    const starter = new TemporalDeliveryStarter(() => client, { taskQueue, searchAttributes });
    const keys = {
      tenantId: defineSearchAttributeKey(DELIVERY_SEARCH_ATTRIBUTES.tenantId.name, 'KEYWORD'),
      topic: defineSearchAttributeKey(DELIVERY_SEARCH_ATTRIBUTES.topic.name, 'KEYWORD'),
      attempt: defineSearchAttributeKey(DELIVERY_SEARCH_ATTRIBUTES.attempt.name, 'INT'),
    };
    const settings = { schedule: config.webhooks.retrySchedule, maxAttemptTimeoutMs: config.webhooks.timeoutMs };

    /** An event stored as publishEvent stores a Ping-sized event routed to `hookIds`. */
    const storeEvent = async (hookIds) => {
      const id = crypto.randomUUID();
      const routes = hookIds.map((hookId) => ({
        hookId,
        action: 'https',
        deliveryId: deliveryIdFor(id, hookId),
        status: 'started',
      }));
      const record = {
        id,
        tenantId,
        topic: 'Ping',
        partyId: '',
        partyKey: null,
        documentId: null,
        refToDocumentId: null,
        message: `Ping for hook ${hookIds[0]}`,
        details: { hookId: hookIds[0] },
        createdBy: 'api',
        createdOn: new Date(),
        label: 'routed',
        routes,
        targetHookId: null,
        excludeHookIds: [],
      };
      await events.insert(record);
      // Both models' runs carry the event as the publisher's do, so no attempt reads it back (on FerretDB that read
      // is a scan of every stored event, which would measure the database's size instead of the models).
      return { id, routes, event: toGatewayEvent(record), partyKey: record.partyKey };
    };

    const models = {
      'per hook': async (event) => {
        await Promise.all(
          event.routes.map((r) =>
            starter.startDelivery(
              {
                tenantId,
                eventId: event.id,
                hookId: r.hookId,
                deliveryId: r.deliveryId,
                ...settings,
                event: event.event,
                eventPartyKey: event.partyKey,
              },
              { topic: 'Ping', partyKey: '' },
              'fresh',
            ),
          ),
        );
        return event.routes.map((r) => deliverWebhookWorkflowId(tenantId, r.deliveryId));
      },
      'fan-out': async (event) => {
        const workflowId = `webhook-event:${tenantId}:${event.id}`;
        await client.workflow.start('deliverEventFanOut', {
          taskQueue,
          workflowId,
          args: [
            {
              tenantId,
              eventId: event.id,
              event: event.event,
              eventPartyKey: event.partyKey,
              hooks: event.routes.map((r) => ({ hookId: r.hookId, deliveryId: r.deliveryId })),
              ...settings,
              searchAttributes,
            },
          ],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          ...(searchAttributes
            ? {
                typedSearchAttributes: [
                  { key: keys.tenantId, value: tenantId },
                  { key: keys.topic, value: 'Ping' },
                  { key: keys.attempt, value: 0 },
                ],
              }
            : {}),
        });
        return [workflowId];
      },
    };

    const rows = [];
    try {
      await worker.ready();
      for (const n of hookCounts) {
        const hookIds = hooks.slice(0, n);
        for (const [name, start] of Object.entries(models)) {
          const label = `${name}, ${n} hook${n > 1 ? 's' : ''} per event`;
          let workflows = 0;
          const started = [];
          /** One event: stored, its run(s) started, every delivery received; ms from the store to each arrival. */
          const once = async () => {
            const t = performance.now();
            const event = await storeEvent(hookIds);
            const ids = await start(event);
            workflows += ids.length;
            if (started.length < 1000) started.push(...ids);
            const arrivals = await Promise.all(
              event.routes.map((r) => receiver.arrival(r.deliveryId, DELIVERY_WAIT_MS)),
            );
            if (arrivals.some((a) => a === undefined))
              throw new Error(`event ${event.id}: a delivery was not received within ${DELIVERY_WAIT_MS / 1000} s`);
            return arrivals.map((a) => a - t);
          };
          ctx.log(
            `webhooks: model comparison, ${label}: warm-up, then ${plan.concurrency} loops for ${plan.compareS} s`,
          );
          await closedLoop(plan.concurrency, plan.warmupS, once);
          workflows = 0;
          started.length = 0;
          const pids = { worker: worker.pid(), ...ctx.serverPids };
          const m = await cpu.measureCpu(pids, () => closedLoop(plan.concurrency, plan.compareS, once));
          const through = m.result;
          const workflowsInPass = workflows;
          const deliveries = through.latency.count;
          const costs = cpu.cpuCost(m, deliveries, ctx.cores);
          // Half the delivery rate, in events per second.
          const halfRate = Math.max(0.5, through.perSecond / 2);
          ctx.log(
            `webhooks: model comparison, ${label}: latency at ${fmt(halfRate, 1)} events/s for ${plan.compareS} s`,
          );
          const latency = await openLoop(halfRate, plan.compareS, once);
          // History size of closed runs from the throughput pass (a sample, evenly spread).
          const step = Math.max(1, Math.floor(started.length / HISTORY_SAMPLE));
          const sample = started.filter((_, i) => i % step === 0).slice(0, HISTORY_SAMPLE);
          let events = 0;
          for (const id of sample) events += Number((await client.workflow.getHandle(id).describe()).historyLength);
          const perRun = sample.length ? events / sample.length : NaN;
          const runsPerEvent = name === 'per hook' ? n : 1;
          rows.push({
            label,
            model: name,
            hooksPerEvent: n,
            eventsPerSecond: through.perSecond,
            deliveriesPerSecond: through.valuesPerSecond,
            workflowsStarted: workflowsInPass,
            workflowsPerDelivery: deliveries ? workflowsInPass / deliveries : NaN,
            throughputLatency: through.latency,
            halfRateEvents: halfRate,
            latency: latency.latency,
            historyEventsPerRun: perRun,
            historyEventsPerDelivery: (perRun * runsPerEvent) / n,
            cpu: costs,
            failed: through.failed + latency.failed,
            firstError: through.firstError || latency.firstError,
          });
        }
      }
      const crashed = worker.crashed();
      if (crashed) throw new Error(crashed);
      return rows;
    } finally {
      await connection.close().catch(() => {});
      await db.close().catch(() => {});
    }
  }

  return { ready: () => worker.ready(), run, stop: () => worker.stop() };
}

/** Report tables and notes for the comparison rows. */
function comparisonTables(rows, plan) {
  const ms = (c, k) => (c && c.perRequestMs[k] !== undefined ? fmt(c.perRequestMs[k], 1) : '-');
  return [
    {
      title: `Delivery models on one worker (${plan.concurrency} closed loops for ${plan.compareS} s, then half that event rate open loop; latency: event stored → delivery received, every delivery)`,
      header: [
        'model',
        'runs started',
        'runs per delivery',
        'deliveries/s',
        'events/s',
        'p50 at half rate',
        'p99 at half rate',
        'p99 closed loop',
        'history events per delivery',
      ],
      rows: rows.map((r) => [
        r.label,
        String(r.workflowsStarted),
        fmt(r.workflowsPerDelivery, 2),
        fmt(r.deliveriesPerSecond, 1),
        fmt(r.eventsPerSecond, 1),
        r.latency.p50,
        r.latency.p99,
        r.throughputLatency.p99,
        fmt(r.historyEventsPerDelivery, 1),
      ]),
    },
    {
      title:
        'Delivery models: CPU ms per delivery by process ("bench" stores the events and starts the runs, the API\'s part in the product)',
      header: ['model', 'worker', 'database', 'Temporal', 'bench', 'machine busy', 'other programs'],
      rows: rows.map((r) => [
        r.label,
        ms(r.cpu, 'worker'),
        ms(r.cpu, 'database'),
        ms(r.cpu, 'temporal'),
        ms(r.cpu, 'loadGenerator'),
        r.cpu ? `${fmt(100 * r.cpu.machineBusyShare)}%` : '-',
        r.cpu ? `${fmt(100 * r.cpu.othersShare)}%` : '-',
      ]),
    },
  ];
}

module.exports = { prepareComparison, comparisonTables };
