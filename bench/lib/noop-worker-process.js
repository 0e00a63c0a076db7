'use strict';
// Starts bench/lib/noop-worker.js as a supervised child and waits until it polls: the webhook benchmark's baseline
// and bench/experiments use it, the latter with a workflow bundle of their own.
const path = require('node:path');
const { startWorkerChild } = require('./worker-child');

const NOOP_WORKER_JS = path.join(__dirname, 'noop-worker.js');
const READY_TIMEOUT_MS = 120_000;

/** { temporalAddress, taskQueue, logFile, workflowsPath? } → { pid(), ready(), crashed(), stop() }. */
function startNoopWorker({ temporalAddress, taskQueue, logFile, workflowsPath }) {
  return startWorkerChild({
    name: 'noop worker',
    script: NOOP_WORKER_JS,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...(workflowsPath ? { BENCH_WORKFLOWS_PATH: workflowsPath } : {}),
    },
    logFile,
    readyPattern: /noop worker running/,
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
}

module.exports = { startNoopWorker };
