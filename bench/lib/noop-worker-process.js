'use strict';
// Starts bench/lib/noop-worker.js as a supervised child and waits until it polls: the webhook benchmark's baseline
// and bench/experiments use it, the latter with a workflow bundle of their own.
const fs = require('node:fs');
const path = require('node:path');
const services = require('../../scripts/lib/services');

const NOOP_WORKER_JS = path.join(__dirname, 'noop-worker.js');
const READY_TIMEOUT_MS = 120_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** { temporalAddress, taskQueue, logFile, workflowsPath? } → { pid(), ready(), stop() }. */
function startNoopWorker({ temporalAddress, taskQueue, logFile, workflowsPath }) {
  const sup = services.createSupervisor();
  const fd = fs.openSync(logFile, 'a');
  let managed;
  try {
    managed = sup.spawn('noop-worker', process.execPath, [NOOP_WORKER_JS], {
      cwd: services.REPO_ROOT,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        ...(workflowsPath ? { BENCH_WORKFLOWS_PATH: workflowsPath } : {}),
      },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  return {
    pid: () => managed.child.pid,
    async ready() {
      const deadline = Date.now() + READY_TIMEOUT_MS;
      while (!/noop worker running/.test(fs.readFileSync(logFile, 'utf8'))) {
        if (managed.exited) throw new Error(`noop worker exited: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`noop worker did not start within ${READY_TIMEOUT_MS / 1000} s`);
        await sleep(200);
      }
    },
    async stop() {
      await sup.stopChild(managed, 10_000);
      sup.close();
    },
  };
}

module.exports = { startNoopWorker };
