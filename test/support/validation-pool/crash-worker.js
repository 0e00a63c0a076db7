'use strict';
// The real worker, plus one test behaviour: a document containing CRASH-THE-WORKER ends the thread mid-job (exit
// code 70), as a native crash or an abort in a dependency would. Everything else goes to the real worker.
const { parentPort } = require('node:worker_threads');
require('./ts-require');

const MARKER = Buffer.from('CRASH-THE-WORKER');
parentPort.on('message', (m) => {
  if (
    m &&
    m.type === 'job' &&
    Buffer.from(typeof m.input === 'string' ? Buffer.from(m.input) : m.input).includes(MARKER)
  )
    process.exit(70);
});
require('../../../src/validation/pool-worker.ts');
