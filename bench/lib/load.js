'use strict';
// Closed-loop load with autocannon: a fixed number of connections, each sending its next request as soon as the
// previous one is answered. Latencies are collected per response (sub-millisecond precision) next to autocannon's
// own counters, so percentiles are exact rather than read from a 1 ms histogram.

const autocannon = require('autocannon');

const KEEP_FAILURE_SAMPLES = 5;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  // Nearest-rank: the smallest value with at least p% of the samples at or below it.
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

function summarize(latencies) {
  const sorted = Float64Array.from(latencies).sort();
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    min: sorted.length ? sorted[0] : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

/**
 * Runs one autocannon pass. `request` is { method, path, headers, body, setupRequest }; give `durationS` or `amount`
 * (with `maxS` as a time cap for an amount that takes too long; requests still in flight then are abandoned).
 * Resolves a plain result: counts, rates, latency summary (2xx only) and up to five non-2xx answers for the report.
 */
function runLoad({ url, request, connections, durationS, amount, maxS, timeoutS = 30, title }) {
  return new Promise((resolve, reject) => {
    const latencies = [];
    const failures = [];
    let answered = 0;
    const started = process.hrtime.bigint();
    const opts = {
      url,
      title,
      connections,
      timeout: timeoutS,
      requests: [
        {
          method: request.method,
          path: request.path,
          headers: request.headers,
          body: request.body,
          ...(request.setupRequest ? { setupRequest: request.setupRequest } : {}),
          onResponse: (status, body) => {
            if ((status < 200 || status > 299) && failures.length < KEEP_FAILURE_SAMPLES) {
              failures.push({ status, body: String(body).slice(0, 400) });
            }
          },
        },
      ],
    };
    if (amount !== undefined) opts.amount = amount;
    else opts.duration = durationS;

    let capTimer;
    let cutShort = false;
    const instance = autocannon(opts, (err, result) => {
      clearTimeout(capTimer);
      if (err) return reject(err);
      const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
      const ok = Object.entries(result.statusCodeStats || {})
        .filter(([code]) => code.startsWith('2'))
        .reduce((n, [, v]) => n + v.count, 0);
      resolve({
        title,
        connections,
        durationS: result.duration,
        elapsedS,
        requests: result.requests.sent,
        completed: answered,
        // Sent but neither answered nor failed when the pass ended: left out of every figure.
        abandoned: Math.max(0, result.requests.sent - answered - result.errors),
        ok,
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats || {}).map(([k, v]) => [k, v.count])),
        rps: result.duration > 0 ? ok / result.duration : 0,
        requestBytesPerS: result.duration > 0 && request.body ? (ok * request.body.length) / result.duration : 0,
        latencyMs: summarize(latencies),
        cutShort,
        failures,
      });
    });
    if (maxS !== undefined) {
      capTimer = setTimeout(() => {
        cutShort = true;
        instance.stop();
      }, maxS * 1000);
    }
    instance.on('response', (_client, status, _bytes, responseTime) => {
      answered += 1;
      if (status >= 200 && status <= 299) latencies.push(responseTime);
    });
    // The sample answers above only cover HTTP replies; keep the first transport errors too.
    instance.on('reqError', (e) => {
      if (failures.length < KEEP_FAILURE_SAMPLES) failures.push({ error: e && e.message ? e.message : String(e) });
    });
  });
}

/**
 * Why a pass cannot be trusted, or undefined: any non-2xx answer, connection error or timeout means the benchmark
 * (or the gateway under it) broke, not merely that it was slow.
 */
function brokenReason(r) {
  if (r.non2xx === 0 && r.errors === 0) return undefined;
  const codes = Object.entries(r.statusCodes)
    .filter(([c]) => !c.startsWith('2'))
    .map(([c, n]) => `${n}× ${c}`);
  return `${r.non2xx} non-2xx${codes.length ? ` (${codes.join(', ')})` : ''}, ${r.errors} errors (${r.timeouts} timeouts); first: ${JSON.stringify(r.failures)}`;
}

module.exports = { runLoad, summarize, percentile, brokenReason };
