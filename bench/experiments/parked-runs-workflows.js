'use strict';
// Workflows of bench/experiments/parked-runs.js, run by bench/lib/noop-worker.js: the baseline's no-op workflow,
// and a run that parks the way a delivery on a stuck hook does (one activity, then a signal or a long timer).
const { proxyActivities, condition, defineSignal, setHandler } = require('@temporalio/workflow');

const { noop } = proxyActivities({ startToCloseTimeout: '1 minute' });
const wake = defineSignal('wake');

async function benchNoop() {
  await noop();
}

async function parked() {
  let woken = false;
  setHandler(wake, () => {
    woken = true;
  });
  await noop();
  await condition(() => woken, '15 minutes');
}

module.exports = { benchNoop, parked };
