'use strict';
// What a second hook's event load costs the gateway's processes with nothing else running, by what its receiver does:
// `control` (a healthy receiver), `hung` (a receiver that never answers, hook timeout 10 s: timeouts one after
// another, the cap narrowed, deliveries parked) and `hung100` (the same receiver, hook timeout 100 s: its cap fills
// and deliveries park, and its first attempts time out together 100 s after they began, inside the window when
// SETTLE_S + WINDOW_S is more than about 100, a wave of timeouts). Each condition gets a fresh hook and RATE
// events per second through the API's ping endpoint; after SETTLE_S its processes' CPU is measured for WINDOW_S, with
// the Temporal server's collections (count, wall time, live heap); then its runs are ended. A diagnostic, not part of
// `npm run bench` (run `npm run build` first):
//   node bench/experiments/hook-load-cost.js [CONDITIONS=control,hung,hung100,hung100,hung,control] [SETTLE_S=40] [WINDOW_S=60] [RATE=2]
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const services = require('../../scripts/lib/services');
const gateway = require('../lib/gateway');
const { findServerPids, processCpuSeconds } = require('../lib/cpu');
const { readGoGcTrace } = require('../lib/stalls');
const { startReceiver } = require('../lib/receiver');

const [CONDITIONS = 'control,hung,hung100,hung100,hung,control', SETTLE_S = '40', WINDOW_S = '60', RATE = '2'] =
  process.argv.slice(2);
const KEY = 'experiment-secure-key-0123456789';
const TIMEOUT_S = { control: 10, hung: 10, hung100: 100 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ROOT = services.REPO_ROOT;

async function main() {
  const conditions = CONDITIONS.split(',');
  for (const c of conditions) if (!(c in TIMEOUT_S)) throw new Error(`unknown condition ${c} (control, hung, hung100)`);
  if (!/gctrace=/.test(process.env.GODEBUG || ''))
    process.env.GODEBUG = [process.env.GODEBUG, 'gctrace=1'].filter(Boolean).join(',');
  const { deliveryIdFor } = require(path.join(ROOT, 'dist', 'src', 'webhooks', 'delivery-id.js'));
  const { deliverWebhookWorkflowId } = require(path.join(ROOT, 'dist', 'workflows', 'contracts', 'deliver-webhook.js'));
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hook-load-cost-'));
  const svc = await services.startServices({ ui: false, handleSignals: true });
  const healthy = await startReceiver({ hang: false });
  const hung = await startReceiver({ hang: true });
  const gw = await gateway.startGateway({
    svc,
    logDir,
    label: 'hook-load-cost',
    env: {
      RATE_LIMIT_API_PER_MINUTE: '1000000000',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
    },
  });
  const client = new Client({ connection: await Connection.connect({ address: svc.temporalAddress }) });
  const agent = new http.Agent({ keepAlive: true });
  try {
    const creds = await gateway.seedTenant(gw);
    const token = await gateway.fetchToken(gw, creds);
    const api = (method, route, body) => gateway.apiCall(agent, `${gw.url}${route}`, { method, token, body });
    const { temporal, database } = findServerPids();
    const pids = { temporal, database, api: gw.api.pid, worker: gw.worker.pid };
    const cpuNow = () =>
      Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, pid ? processCpuSeconds(pid) : NaN]));
    console.log(
      `conditions ${conditions.join(', ')}; ${RATE} events/s, ${SETTLE_S} s settling, ${WINDOW_S} s measured; CPU in ms per second`,
    );
    for (const kind of conditions) {
      const receiver = kind === 'control' ? healthy : hung;
      const hookId = (
        await api('POST', '/api/v1/hook', {
          url: receiver.url,
          topic: `Cost${kind}`,
          secureKey: KEY,
          timeoutSeconds: TIMEOUT_S[kind],
        })
      ).id;
      const events = [];
      let stop = false;
      const load = (async () => {
        while (!stop) {
          api('POST', `/api/v1/hook/${hookId}/ping`).then(
            (r) => events.push(r.eventId),
            () => undefined,
          );
          await sleep(1000 / Number(RATE));
        }
      })();
      const runIds = () => events.map((e) => deliverWebhookWorkflowId(creds.tenantId, deliveryIdFor(e, hookId)));
      /** History length and status of each run, as describe gives them (a run not found counts as none). */
      const describeAll = (ids) =>
        Promise.all(
          ids.map((id) =>
            client.workflow
              .getHandle(id)
              .describe()
              .then(
                (d) => ({ length: d.historyLength, open: d.status.name === 'RUNNING' }),
                () => ({ length: 0, open: false }),
              ),
          ),
        );
      const historyOf = (runs) => runs.reduce((a, r) => a + r.length, 0);
      await sleep(Number(SETTLE_S) * 1000);
      // History events the hook's runs wrote during the window: the work Temporal did for them (describe calls are
      // made outside the CPU window).
      const history0 = historyOf(await describeAll(runIds()));
      const t0 = Date.now();
      const c0 = cpuNow();
      const r0 = receiver.requests();
      await sleep(Number(WINDOW_S) * 1000);
      const c1 = cpuNow();
      const t1 = Date.now();
      const requests = receiver.requests() - r0;
      stop = true;
      await load;
      const ids = runIds();
      const runs = await describeAll(ids);
      const windowHistory = historyOf(runs) - history0;
      const gcs = readGoGcTrace(path.join(svc.logDir, 'temporal.log'), pids.temporal, 'temporal', 0).filter(
        (g) => g.at >= t0 && g.at < t1,
      );
      const open = runs.filter((r) => r.open).length;
      await Promise.all(
        ids.map((id) =>
          client.workflow
            .getHandle(id)
            .terminate('experiment: condition over')
            .catch(() => undefined),
        ),
      );
      receiver.dropConnections();
      const perS = (k) => ((c1[k] - c0[k]) / ((t1 - t0) / 1000)) * 1000;
      const gcText = gcs.length
        ? `${gcs.length} GCs ${gcs.reduce((a, g) => a + g.ms, 0)} ms wall, live ${Math.min(...gcs.map((g) => g.liveMb))}-${Math.max(...gcs.map((g) => g.liveMb))} MB`
        : 'no GC';
      console.log(
        `${kind.padEnd(8)} temporal ${perS('temporal').toFixed(0).padStart(4)}  worker ${perS('worker').toFixed(0).padStart(4)}  api ${perS('api').toFixed(0).padStart(4)}  database ${perS('database').toFixed(0).padStart(4)}` +
          `  | history events/s ${(windowHistory / ((t1 - t0) / 1000)).toFixed(1)}, receiver requests ${requests} | runs ${runs.length} (open ${open}), ${(historyOf(runs) / Math.max(1, runs.length)).toFixed(1)} history events each | ${gcText}`,
      );
      await sleep(5_000);
    }
  } finally {
    agent.destroy();
    await client.connection.close().catch(() => {});
    await gw.stop();
    await healthy.close();
    await hung.close();
    await svc.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
