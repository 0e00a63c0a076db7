'use strict';
// Worker process of the webhook benchmark's baseline (child of bench/webhooks.bench.js): the no-op workflow and
// activity on TEMPORAL_TASK_QUEUE. Prints "noop worker running" when polling.
const path = require('node:path');
const { NativeConnection, Worker, Runtime, DefaultLogger } = require('@temporalio/worker');

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: process.env.TEMPORAL_TASK_QUEUE,
    // Another bundle with the same no-op activity (bench/experiments) may be named instead.
    workflowsPath: process.env.BENCH_WORKFLOWS_PATH || path.join(__dirname, 'noop-workflows.js'),
    activities: { noop: async () => undefined },
  });
  console.log('noop worker running');
  await worker.run();
  await connection.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
