#!/usr/bin/env node
'use strict';
// Saves the history of a finished workflow as a replay fixture:
//   node scripts/record-history.js <workflowId> <name>   (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE from the environment)
// The file lands in test/replay/histories/<name>.json; test/workflows/replay.test.ts replays every file there.
const fs = require('node:fs');
const path = require('node:path');
const { Client, Connection } = require('@temporalio/client');
const { historyToJSON } = require('@temporalio/common/lib/proto-utils');

async function main() {
  const [workflowId, name] = process.argv.slice(2);
  if (!workflowId || !name) {
    console.error('usage: node scripts/record-history.js <workflowId> <name>');
    process.exit(2);
  }
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS || '127.0.0.1:7233' });
  try {
    const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || 'default' });
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const file = path.join(__dirname, '../test/replay/histories', `${name}.json`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${historyToJSON(history)}\n`);
    console.log(`wrote ${path.relative(process.cwd(), file)} (${history.events.length} events)`);
  } finally {
    await connection.close();
  }
}
main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
