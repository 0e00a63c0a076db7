#!/usr/bin/env node
'use strict';
// Prebuilds the workflow bundle (after `npm run build`): the worker then starts without bundling, and the SDK's
// bundler refuses Node built-ins and other non-deterministic modules here, at build time, not at deploy time.
//   node scripts/build-workflow-bundle.js [out=dist/workflow-bundle.js]
//   → run the worker with TEMPORAL_WORKFLOW_BUNDLE=<out>
// WORKFLOWS_DIST names another compiled tree to bundle (scripts/image-tree.js); default: this repository's dist/.
const fs = require('node:fs');
const path = require('node:path');
const { bundleWorkflowCode } = require('@temporalio/worker');

async function main() {
  const out = path.resolve(process.argv[2] || path.join(__dirname, '../dist/workflow-bundle.js'));
  const dist = process.env.WORKFLOWS_DIST || path.join(__dirname, '../dist');
  const workflowsPath = path.join(dist, 'workflows', 'index.js');
  if (!fs.existsSync(workflowsPath)) throw new Error(`${workflowsPath} missing: run \`npm run build\` first`);
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} },
  });
  fs.writeFileSync(out, code);
  console.log(`workflow bundle: ${path.relative(process.cwd(), out)} (${(code.length / 1024).toFixed(0)} KiB)`);
}
main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
