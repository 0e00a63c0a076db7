'use strict';
// Worker process of the webhook benchmark's delivery-model comparison (child of bench/webhooks.bench.js): the
// gateway's own worker (same composition, activities, settings and database as the product worker) on a task queue
// of its own, with a workflow bundle that holds both delivery models (bench/lib/fanout-workflows.js). Both models
// therefore run on one worker with one configuration. Prints the gateway's "worker running" line when polling.
const path = require('node:path');

const DIST = path.join(__dirname, '..', '..', 'dist', 'src');
const { loadConfig } = require(path.join(DIST, 'config', 'load-config'));
const { startWorker } = require(path.join(DIST, 'main', 'worker'));

async function main() {
  const config = loadConfig();
  // workflowBundle unset: the comparison bundle is built from fanout-workflows.js, never the product's prebuilt one.
  const w = await startWorker(config, {
    workflowsPath: path.join(__dirname, 'fanout-workflows.js'),
    workflowBundle: undefined,
  });
  await w.run;
  await w.stop();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error('compare worker failed:', e);
    process.exit(1);
  },
);
