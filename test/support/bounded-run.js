'use strict';
// Child process of runBounded (bounded-process.ts): loads one source module, calls one of its functions on the input
// it is sent, and answers how that ended, with the peak memory it took.
require('./validation-pool/ts-require');

process.once('message', (job) => {
  const fn = require(job.module)[job.fn];
  const input = Buffer.from(job.input.buffer, job.input.byteOffset, job.input.byteLength);
  global.gc();
  const baseline = { heapUsed: process.memoryUsage().heapUsed, maxRss: process.resourceUsage().maxRSS * 1024 };
  const started = Date.now();
  let answer;
  try {
    const value = fn(input, ...job.args);
    answer = { kind: 'returned', value: summarise(value) };
  } catch (e) {
    answer = { kind: 'threw', code: e && e.code, message: String(e && e.message), details: e && e.details };
  }
  const ms = Date.now() - started;
  const peakRssGrowth = process.resourceUsage().maxRSS * 1024 - baseline.maxRss;
  process.send({ ...answer, ms, baselineHeapBytes: baseline.heapUsed, peakRssGrowthBytes: peakRssGrowth }, () =>
    process.exit(0),
  );
});

/** Values go back as JSON; buffers as their length only. */
function summarise(value) {
  return JSON.parse(
    JSON.stringify(value ?? null, (k, v) =>
      v && v.type === 'Buffer' && Array.isArray(v.data) ? { bufferLength: v.data.length } : v,
    ),
  );
}
