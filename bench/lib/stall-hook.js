'use strict';
// Preloaded (node --require) into the gateway's API and worker by the webhook benchmark: with BENCH_STALL_FILE set,
// the process appends its event-loop stalls and long GC pauses there (bench/lib/stalls.js), named after its script.

const path = require('node:path');
const { startStallMonitor } = require('./stalls');

if (process.env.BENCH_STALL_FILE)
  startStallMonitor({ name: path.basename(process.argv[1] || 'node', '.js'), file: process.env.BENCH_STALL_FILE });
