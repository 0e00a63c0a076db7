'use strict';
// Worker process of bench/experiments/parked-runs.js. Prints "worker running" when polling.
const path = require('node:path');
const { NativeConnection, Worker, Runtime, DefaultLogger } = require('@temporalio/worker');

(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: process.env.TEMPORAL_TASK_QUEUE,
    workflowsPath: path.join(__dirname, 'parked-runs-workflows.js'),
    activities: { noop: async () => undefined },
  });
  console.log('worker running');
  await worker.run();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
