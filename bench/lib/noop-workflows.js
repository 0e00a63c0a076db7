'use strict';
// Workflow bundle of the webhook benchmark's baseline: one workflow that runs one no-op activity, the least a
// workflow-plus-activity can cost on this Temporal server.
const { proxyActivities } = require('@temporalio/workflow');

const { noop } = proxyActivities({ startToCloseTimeout: '1 minute' });

async function benchNoop() {
  await noop();
}

module.exports = { benchNoop };
