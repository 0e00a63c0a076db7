'use strict';
// Closed and open load loops of the webhook benchmark. An operation resolves one latency (ms) or an array of them
// (an event delivered to several hooks: one latency per delivery); `done` counts operations, `latency` all values.
const { summarize } = require('./load');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const collect = (into, v) => {
  if (Array.isArray(v)) into.push(...v);
  else into.push(v);
};

/** `concurrency` loops, each running `op` again as soon as it resolves, for `seconds`; counts and latencies. */
async function closedLoop(concurrency, seconds, op) {
  const latencies = [];
  let done = 0;
  let failed = 0;
  const firstError = [];
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        try {
          collect(latencies, await op());
          done += 1;
        } catch (e) {
          failed += 1;
          if (firstError.length === 0) firstError.push(e.message);
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return {
    done,
    failed,
    elapsedS: elapsed,
    perSecond: done / elapsed,
    valuesPerSecond: latencies.length / elapsed,
    latency: summarize(latencies),
    firstError: firstError[0],
  };
}

/**
 * `op` started at a fixed rate for `seconds`, whatever the earlier ones are doing; waits for the stragglers. `op` gets
 * the time it was due (performance.now), so it can measure from the schedule rather than from its late start.
 */
async function openLoop(rate, seconds, op) {
  const interval = 1000 / rate;
  const pending = [];
  const t0 = performance.now();
  const count = Math.max(1, Math.round(rate * seconds));
  for (let i = 0; i < count; i++) {
    const due = t0 + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(
      op(due).then(
        (v) => ({ ok: true, v, at: due - t0 }),
        (e) => ({ ok: false, e }),
      ),
    );
  }
  const results = await Promise.all(pending);
  const latencies = [];
  for (const r of results) if (r.ok) collect(latencies, r.v);
  const errors = results.filter((r) => !r.ok);
  return {
    sent: count,
    done: results.length - errors.length,
    failed: errors.length,
    latency: summarize(latencies),
    // The raw values, so passes can be pooled for a percentile of more samples.
    values: latencies,
    // When each operation was due (performance.now of the loop's start + atMs), to line slow ones up with events.
    startedAt: t0,
    timeline: results.filter((r) => r.ok).map((r) => ({ atMs: r.at, v: r.v })),
    firstError: errors[0] && errors[0].e.message,
  };
}

module.exports = { closedLoop, openLoop, sleep };
