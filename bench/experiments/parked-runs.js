'use strict';
// What open, idle runs cost the Temporal dev server: the no-op baseline (20 closed loops) with no other runs open,
// then with PARKED runs open that each ran one activity and wait on a 15-minute timer (as deliveries parked on a
// stuck hook do), in ROUNDS of control / parked, the parked runs terminated between rounds. Prints workflows per
// second, p50/p99, the server's CPU per workflow and its garbage collections (count, wall time, live heap) for each
// pass. A diagnostic, not part of `npm run bench`:
//   node bench/experiments/parked-runs.js [PARKED=800] [ROUNDS=3] [PASS_S=30]
const crypto = require('node:crypto');
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { Client, Connection } = require('@temporalio/client');
const services = require('../../scripts/lib/services');
const { findServerPids, processCpuSeconds } = require('../lib/cpu');
const { startNoopWorker } = require('../lib/noop-worker-process');
const { readGoGcTrace } = require('../lib/stalls');

const [PARKED = 800, ROUNDS = 3, PASS_S = 30] = process.argv.slice(2).map(Number);
const LOOPS = 20;
const TASK_QUEUE = 'parked-runs-experiment';
const SETTLE_MS = 10_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const cpuMs = (pid) => processCpuSeconds(pid) * 1000;

async function main() {
  // The dev server prints each collection, read back per pass.
  if (!/gctrace=/.test(process.env.GODEBUG || ''))
    process.env.GODEBUG = [process.env.GODEBUG, 'gctrace=1'].filter(Boolean).join(',');
  const svc = await services.startServices({ ui: false, handleSignals: true });
  const temporalPid = findServerPids().temporal;
  if (!temporalPid) throw new Error('the Temporal dev server was not started here (TEMPORAL_ADDRESS set?)');
  const worker = startNoopWorker({
    temporalAddress: svc.temporalAddress,
    taskQueue: TASK_QUEUE,
    logFile: path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'parked-runs-')), 'worker.log'),
    workflowsPath: path.join(__dirname, 'parked-runs-workflows.js'),
  });
  await worker.ready();
  const client = new Client({ connection: await Connection.connect({ address: svc.temporalAddress }) });

  async function pass(label) {
    const latencies = [];
    const end = Date.now() + PASS_S * 1000;
    const cpu0 = cpuMs(temporalPid);
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: LOOPS }, async () => {
        while (Date.now() < end) {
          const s = Date.now();
          await client.workflow.execute('benchNoop', { taskQueue: TASK_QUEUE, workflowId: crypto.randomUUID() });
          latencies.push(Date.now() - s);
        }
      }),
    );
    const ms = Date.now() - t0;
    const cpu = cpuMs(temporalPid) - cpu0;
    const gcs = readGoGcTrace(path.join(svc.logDir, 'temporal.log'), temporalPid, 'temporal', 0).filter(
      (g) => g.at >= t0 && g.at < t0 + ms,
    );
    const gcText = gcs.length
      ? `${gcs.length} GCs, ${gcs.reduce((a, g) => a + g.ms, 0)} ms wall (longest ${Math.max(...gcs.map((g) => g.ms))}), live ${Math.min(...gcs.map((g) => g.liveMb))}-${Math.max(...gcs.map((g) => g.liveMb))} MB`
      : 'no GC';
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))];
    console.log(
      `${label.padEnd(26)} ${((latencies.length / ms) * 1000).toFixed(1).padStart(6)} wf/s  p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  Temporal ${(cpu / latencies.length).toFixed(1)} ms CPU per workflow, ${gcText}`,
    );
  }

  // A parked run's history ends with its TimerStarted, its 11th event (start, task, activity, task, timer).
  const PARKED_HISTORY = 11;
  async function waitParked(ids) {
    const t0 = Date.now();
    for (;;) {
      const lengths = await Promise.all(
        ids.map((id) =>
          client.workflow
            .getHandle(id)
            .describe()
            .then((d) => d.historyLength),
        ),
      );
      if (lengths.every((n) => n >= PARKED_HISTORY)) return Date.now() - t0;
      if (Date.now() - t0 > 10 * 60_000)
        throw new Error(`parked runs not parked after 10 min (history lengths ${lengths.join(', ')})`);
      await sleep(1000);
    }
  }

  const open = [];
  try {
    await pass('warm-up');
    for (let round = 1; round <= ROUNDS; round++) {
      await pass(`round ${round}: none open`);
      for (let i = 0; i < PARKED; i += LOOPS) {
        await Promise.all(
          Array.from({ length: Math.min(LOOPS, PARKED - i) }, async () => {
            const workflowId = `parked-${crypto.randomUUID()}`;
            open.push(workflowId);
            await client.workflow.start('parked', { taskQueue: TASK_QUEUE, workflowId });
          }),
        );
      }
      // Parking is work (a workflow task, the activity, a second task and the timer, as much as a no-op workflow);
      // the pass measures idle open runs only once the last ones started have parked.
      const parkedAfterMs = await waitParked(open.slice(-LOOPS));
      console.log(
        `round ${round}: the last ${LOOPS} of ${PARKED} runs parked ${(parkedAfterMs / 1000).toFixed(1)} s after the last start`,
      );
      await sleep(SETTLE_MS);
      await pass(`round ${round}: ${PARKED} parked`);
      while (open.length)
        await Promise.all(open.splice(0, LOOPS).map((id) => client.workflow.getHandle(id).terminate()));
      await sleep(SETTLE_MS);
    }
    await pass('last: none open');
  } finally {
    await worker.stop();
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
