'use strict';
// Child process of the transformation suite (bench/transform.bench.js): times the gateway's transformDocument from
// dist/ on its main thread (no worker threads), the way tools/en16931-converter-harness times the Java converters:
// bytes in memory → detect + parse + read + write → XML string, a warm-up, then runs until a time budget is spent.
// Started with fork(); gets { plan, files: [{ direction, file }] } over IPC and answers with one { ok, ... } message.

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const DIST = path.resolve(__dirname, '..', '..', 'dist', 'src');
const TARGET = { ubl2cii: 'en16931-cii', cii2ubl: 'en16931-ubl' };

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function measure({ plan, files }) {
  const { transformDocument } = require(path.join(DIST, 'transform', 'index.js'));
  const out = [];
  for (const { direction, file } of files) {
    const input = fs.readFileSync(file);
    const opts = { targetFormat: TARGET[direction] };
    const t0 = performance.now();
    const first = transformDocument(input, opts);
    const firstMs = performance.now() - t0;
    const warmup = input.length > 200_000 ? plan.warmupLarge : plan.warmup;
    for (let k = 1; k < warmup; k++) transformDocument(input, opts);
    const runs = [];
    const c0 = cpuMs();
    const start = performance.now();
    while (runs.length < plan.minRuns || (runs.length < plan.maxRuns && performance.now() - start < plan.budgetMs)) {
      const t = performance.now();
      transformDocument(input, opts);
      runs.push(performance.now() - t);
    }
    const cpu = cpuMs() - c0;
    runs.sort((a, b) => a - b);
    const total = runs.reduce((a, b) => a + b, 0);
    out.push({
      direction,
      file: path.basename(file),
      inputBytes: input.length,
      outputBytes: Buffer.byteLength(first.xml),
      firstMs,
      warmup,
      runs: runs.length,
      p50Ms: percentile(runs, 50),
      p99Ms: percentile(runs, 99),
      meanMs: total / runs.length,
      docsPerS: (1000 * runs.length) / total,
      cpuMsPerDoc: cpu / runs.length,
    });
  }
  return out;
}

process.once('message', (msg) => {
  let answer;
  try {
    answer = { ok: true, documents: measure(msg), node: process.version };
  } catch (e) {
    answer = { ok: false, error: e && e.stack ? e.stack : String(e) };
  }
  process.send(answer, () => process.exit(0));
});
