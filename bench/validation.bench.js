'use strict';
// Validation benchmark: the gateway's validate path (detection, XSD with libxml2 in process and xmllint beside it,
// Schematron compiled and SaxonJS beside it) on four valid EN 16931 UBL invoices (10 KiB, 100 KiB, 3 MiB with an
// embedded attachment, 1,000 lines): latency and
// throughput on one thread, throughput of the worker-thread pool on every core, peak RSS of each pass, one 24 MiB
// invoice in a process of its own, and the same Schematron packs on Saxon-HE (Java) as the reference. Each pass runs
// in a child process (bench/lib/validation-runner.js) so its VmHWM is its own. Needs no servers.

const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const memory = require('./lib/memory');
const cpu = require('./lib/cpu');
const { MiB, formatBytes } = require('./lib/invoices');
const vdocs = require('./lib/validation-documents');
const reference = require('../scripts/rules/lib/reference');
const { rulesDir } = require('../scripts/rules/lib/paths');

const RUNNER = path.join(__dirname, 'lib', 'validation-runner.js');
const TARGET_POOL_RATIO = 1.8;
const TARGET_LARGE_RSS = 1024 * MiB;
const LARGE_BYTES = 24 * MiB;
const LARGE_LINES = 1000;
const SAMPLE_MS = 25;

const PLANS = {
  full: {
    latency: { minRuns: 3, maxRuns: 40, budgetMs: 12_000 },
    rulesOnly: { minRuns: 2, maxRuns: 20, budgetMs: 8_000 },
    pool: { minJobs: 4, maxJobs: 200, budgetMs: 12_000 },
    // Saxon-HE: documents per JVM run for the marginal cost (bounded by bytes so the big ones stay short).
    // Saxon-HE: copies per JVM run grow until the run over N copies outlasts the run over one by saxonMinDeltaMs, so
    // the JVM's start-up jitter does not decide the per-document figure.
    saxonCopies: [8, 400],
    saxonMinDeltaMs: 5_000,
  },
  quick: {
    latency: { minRuns: 1, maxRuns: 5, budgetMs: 2_000 },
    rulesOnly: { minRuns: 1, maxRuns: 3, budgetMs: 1_000 },
    pool: { minJobs: 2, maxJobs: 20, budgetMs: 2_000 },
    saxonCopies: [3, 12],
    saxonMinDeltaMs: 1_000,
  },
};

/** utime+stime of a process, its threads and waited-for children (xmllint), seconds; from /proc/<pid>/stat. */
function treeCpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / cpu.clockTicks();
  } catch {
    return undefined;
  }
}

/** Child processes of every thread of `pid` (xmllint is started from whichever thread validates). */
function childPids(pid) {
  const out = [];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return out;
}

/**
 * Runs one pass in a child process. Samples the child's VmRSS and its children's (xmllint) VmHWM every SAMPLE_MS,
 * and takes the child's own VmHWM and CPU from its last reading, so the peak of the process and of the schema
 * validator beside it are both known.
 */
function runPass(mode, args, log) {
  return new Promise((resolve, reject) => {
    const machineBefore = cpu.supported() ? cpu.machineCpuSeconds() : undefined;
    const t0 = performance.now();
    const child = fork(RUNNER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let peakRss = 0;
    let childPeak = 0;
    let lastCpu;
    let answer;
    const timer = setInterval(() => {
      try {
        const s = memory.readStatus(child.pid);
        peakRss = Math.max(peakRss, s.rss || 0);
        lastCpu = treeCpuSeconds(child.pid) ?? lastCpu;
        for (const c of childPids(child.pid)) childPeak = Math.max(childPeak, memory.readStatus(c).hwm || 0);
      } catch {
        // between exits
      }
    }, SAMPLE_MS);
    child.on('message', (m) => {
      answer = m;
      lastCpu = treeCpuSeconds(child.pid) ?? lastCpu;
    });
    child.on('error', (e) => {
      clearInterval(timer);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearInterval(timer);
      const wallMs = performance.now() - t0;
      if (!answer)
        return reject(new Error(`validation ${mode} pass: child exited (${signal || code}) without an answer`));
      if (!answer.ok) return reject(new Error(`validation ${mode} pass failed: ${answer.error}`));
      const machineAfter = machineBefore ? cpu.machineCpuSeconds() : undefined;
      const machine =
        machineBefore && machineAfter
          ? { busy: machineAfter.busy - machineBefore.busy, total: machineAfter.total - machineBefore.total }
          : undefined;
      resolve({
        ...answer,
        wallMs,
        peakRss: Math.max(peakRss, answer.status.rss || 0),
        hwm: answer.status.hwm,
        childPeakHwm: childPeak,
        cpuSeconds: lastCpu,
        machine,
      });
    });
    log(`validation: ${mode} pass`);
    child.send({ mode, ...args });
  });
}

/** Milliseconds of Saxon-HE per document after JVM start and compile: (T(N docs) − T(1 doc)) / (N − 1). */
async function saxonHe(doc, packs, plan, tmp, log) {
  const dir = fs.mkdtempSync(path.join(tmp, 'doc-'));
  const sheets = packs.flatMap((p) => reference.officialXslt(p.id, p.version));
  const source = path.join(dir, 'invoice.xml');
  fs.writeFileSync(source, doc.body);
  // One JVM run per stylesheet over `n` hard links of the document (one read each, no disk space).
  let runs = 0;
  const timeFor = async (n) => {
    const inDir = path.join(dir, `in-${++runs}`);
    fs.mkdirSync(inDir);
    for (let k = 0; k < n; k++) fs.linkSync(source, path.join(inDir, `invoice-${k}.xml`));
    let ms = 0;
    for (const xslt of sheets) {
      // Saxon-HE writes one output per input into an existing directory when the input is a directory.
      const out = path.join(dir, `out-${runs}-${path.basename(xslt)}`);
      fs.mkdirSync(out);
      log(`validation: Saxon-HE ${doc.name}, ${path.basename(xslt)}, ${n} document(s)`);
      ms += await reference.runSaxonHe({ xslt, source: inDir, output: out });
    }
    return ms;
  };
  const firstMs = await timeFor(1);
  let copies = plan.saxonCopies[0];
  let manyMs = await timeFor(copies);
  while (manyMs - firstMs < plan.saxonMinDeltaMs && copies < plan.saxonCopies[1]) {
    copies = Math.min(plan.saxonCopies[1], copies * 4);
    manyMs = await timeFor(copies);
  }
  // The SVRL Saxon-HE wrote must report no failed assertion, as ours did (the documents are valid).
  for (const f of fs.readdirSync(dir).filter((n) => n.startsWith('out-1-'))) {
    for (const out of fs.readdirSync(path.join(dir, f))) {
      const svrl = fs.readFileSync(path.join(dir, f, out), 'utf8');
      if (/<svrl:failed-assert\b[^>]*flag="(fatal|error)"/.test(svrl))
        throw new Error(`Saxon-HE reports a failed assertion on ${doc.name}; the runs do not compare`);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const perDocMs = Math.max(0.001, (manyMs - firstMs) / (copies - 1));
  return {
    copies,
    firstMs,
    manyMs,
    perDocMs,
    docsPerS: 1000 / perDocMs,
    stylesheets: sheets.map((s) => path.basename(s)),
  };
}

function fmt(v, digits = 1) {
  if (v === undefined || Number.isNaN(v)) return '-';
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(digits) : v.toFixed(2);
}

function geomean(values) {
  return Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);
}

function cpuNote(label, pass) {
  if (!pass.machine || pass.cpuSeconds === undefined) return undefined;
  const s = pass.wallMs / 1000;
  const others = Math.max(0, pass.machine.busy - pass.cpuSeconds) / pass.machine.total;
  return `${label}: ${fmt(pass.cpuSeconds)} CPU s over ${fmt(s)} s (${fmt(pass.cpuSeconds / s)} cores on average, xmllint included); other programs used ${Math.round(100 * others)} % of all cores meanwhile`;
}

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { figures: [], tables: [], targets: [], notes: [], problems: [] };
  const dir = rulesDir(process.env);
  const poolSize = os.availableParallelism();
  const loadStart = os.loadavg();
  const documents = vdocs.benchmarkDocuments();
  result.notes.push(
    `documents: ${vdocs.SOURCE} (EN 16931 UBL, valid) rebuilt with generated lines and recomputed totals: ` +
      documents
        .map(
          (d) =>
            `${d.name} = ${formatBytes(d.body.length)}, ${d.lines} line(s)${d.attachmentBytes ? `, ${formatBytes(d.attachmentBytes)} CSV embedded as base64` : ''}`,
        )
        .join('; '),
    'packs: ubl-2.1 (XSD: libxml2-wasm in process; xmllint beside it) + en16931-ubl (Schematron: compiled; SaxonJS beside it), as the gateway picks them for these documents; every document is checked valid before it is timed',
  );

  const single = await runPass('single', { plan, rulesDir: dir }, ctx.log);
  const pool = await runPass('pool', { plan, rulesDir: dir, poolSize }, ctx.log);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-gateway-saxon-'));
  const saxon = [];
  try {
    for (const [k, d] of documents.entries())
      saxon.push(await saxonHe(d, single.documents[k].schematronPacks, plan, tmp, ctx.log));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }

  const large = await runPass('large', { rulesDir: dir, bytes: LARGE_BYTES, lines: LARGE_LINES }, ctx.log);
  const prof = await runPass('profile', { rulesDir: dir, top: 12 }, ctx.log);

  result.tables.push({
    title:
      'Single thread: Validator.validate on the main thread, one document after another (detection + XSD + Schematron)',
    header: ['document', 'bytes', 'lines', 'runs', 'p50 ms', 'p95 ms', 'docs/s', 'CPU ms/doc'],
    rows: single.documents.map((d) => [
      d.name,
      formatBytes(d.bytes),
      String(d.lines),
      String(d.validate.runs),
      d.validate.p50Ms,
      d.validate.p95Ms,
      fmt(d.validate.docsPerS, 2),
      d.validate.cpuMsPerDoc,
    ]),
  });
  const ratios = single.documents.map((d, k) => pool.documents[k].docsPerS / d.validate.docsPerS);
  result.tables.push({
    title: `Worker-thread pool: ${poolSize} workers (one per core), ${2 * poolSize} jobs in flight`,
    header: [
      'document',
      'jobs',
      'pool docs/s',
      'single docs/s',
      'pool ÷ single',
      'pool CPU ms/doc',
      'single CPU ms/doc',
    ],
    rows: pool.documents.map((d, k) => [
      d.name,
      String(d.jobs),
      fmt(d.docsPerS, 2),
      fmt(single.documents[k].validate.docsPerS, 2),
      `${ratios[k].toFixed(2)}×`,
      d.cpuMsPerDoc,
      single.documents[k].validate.cpuMsPerDoc,
    ]),
  });
  result.tables.push({
    title:
      'Business rules only (parse + the en16931-ubl Schematron, one thread): compiled rules vs SaxonJS vs Saxon-HE 13.1 (Java, official XSLT)',
    header: [
      'document',
      'compiled p50 ms',
      'SaxonJS p50 ms',
      'Saxon-HE ms/doc',
      'compiled ÷ Saxon-HE',
      'compiled ÷ SaxonJS',
      'SaxonJS ÷ Saxon-HE',
      'Saxon-HE 1st doc ms',
      'copies',
    ],
    rows: single.documents.map((d, k) => [
      d.name,
      d.rulesOnlyCompiled.p50Ms,
      d.rulesOnly.p50Ms,
      saxon[k].perDocMs,
      `${(d.rulesOnlyCompiled.docsPerS / saxon[k].docsPerS).toFixed(2)}`,
      `${(d.rulesOnlyCompiled.docsPerS / d.rulesOnly.docsPerS).toFixed(1)}`,
      `${(d.rulesOnly.docsPerS / saxon[k].docsPerS).toFixed(3)}`,
      saxon[k].firstMs,
      String(saxon[k].copies),
    ]),
  });
  result.tables.push({
    title:
      'Whole validation per engine (detection + XSD + business rules, one thread): CPU ms per document; the ' +
      'default is libxml2 in process + compiled rules',
    header: [
      'document',
      'default CPU ms/doc',
      'XSD on xmllint CPU ms/doc',
      'rules on SaxonJS CPU ms/doc',
      'SaxonJS ÷ default',
    ],
    rows: single.documents.map((d) => [
      d.name,
      d.validate.cpuMsPerDoc,
      d.validateXmllint.cpuMsPerDoc,
      d.validateSaxon.cpuMsPerDoc,
      `${(d.validateSaxon.cpuMsPerDoc / d.validate.cpuMsPerDoc).toFixed(1)}×`,
    ]),
  });

  result.tables.push({
    title: `Compiled rules, where the time goes: en16931-ubl on the ${prof.largest} invoice, the costliest checks and rule dispatch (median of 3 timed runs; totals per document: ${prof.documents.map((d) => `${d.name} ${fmt(d.total)} ms`).join(', ')})`,
    header: ['check / part', 'evaluations', 'ms', 'share', 'µs per line', `ms on ${prof.smallest}`],
    rows: prof.rows.map((r) => [
      r.key,
      String(r.count),
      fmt(r.ms),
      `${(100 * r.share).toFixed(1)} %`,
      fmt(r.perLineUs, 1),
      fmt(r.smallMs, 2),
    ]),
  });

  const cpuRatios = single.documents.map((d, k) => (poolSize * d.validate.cpuMsPerDoc) / pool.documents[k].cpuMsPerDoc);
  const saxonRatios = single.documents.map((d, k) => d.rulesOnly.docsPerS / saxon[k].docsPerS);
  const compiledHeRatios = single.documents.map((d, k) => d.rulesOnlyCompiled.docsPerS / saxon[k].docsPerS);
  const compiledJsRatios = single.documents.map((d) => d.rulesOnlyCompiled.docsPerS / d.rulesOnly.docsPerS);
  const thousand = single.documents.find((d) => d.lines >= 1000);
  const fullRatios = single.documents.map((d, k) => d.validate.docsPerS / saxon[k].docsPerS);
  result.figures.push(
    {
      id: 'single-peak-rss',
      label: 'peak RSS, single-thread pass (VmHWM of its process; xmllint children not included)',
      value: single.hwm,
      unit: 'bytes',
    },
    {
      id: 'pool-peak-rss',
      label: `peak RSS, pool pass (${poolSize} workers; VmHWM of its process)`,
      value: pool.hwm,
      unit: 'bytes',
    },
    {
      id: 'xmllint-peak',
      label: 'largest xmllint child seen in those passes (VmHWM, sampled)',
      value: Math.max(single.childPeakHwm, pool.childPeakHwm),
      unit: 'bytes',
    },
    {
      id: 'pool-ready',
      label: `pool start: ${poolSize} workers up with packs loaded`,
      value: pool.readyMs,
      unit: 'ms',
    },
    {
      id: 'pool-ratio-geomean',
      label: 'pool ÷ single-thread throughput, geometric mean of the four documents',
      value: `${geomean(ratios).toFixed(2)}×`,
      unit: '',
    },
    {
      id: 'pool-ratio-cpu',
      label: `pool ÷ single-thread throughput if the ${poolSize} workers had their cores to themselves (${poolSize} × single CPU ms/doc ÷ pool CPU ms/doc; derived, not measured), geometric mean`,
      value: `${geomean(cpuRatios).toFixed(2)}×`,
      unit: '',
    },
    {
      id: 'saxon-ratio-rules',
      label: 'SaxonJS ÷ Saxon-HE, business rules only (docs/s ratio, geometric mean of the four documents)',
      value: geomean(saxonRatios).toFixed(3),
      unit: '',
    },
    {
      id: 'saxon-ratio-full',
      label: 'ours (whole validation, compiled rules, one thread) ÷ Saxon-HE (business rules only), geometric mean',
      value: geomean(fullRatios).toFixed(3),
      unit: '',
    },
    {
      id: 'large-ms',
      label: `24 MiB invoice (${large.lines} lines + a ${formatBytes(large.attachmentBytes)} CSV attachment, base64): one validation`,
      value: large.ms,
      unit: 'ms',
    },
    {
      id: 'large-node-hwm',
      label: '24 MiB invoice: VmHWM of the validating process (packs loaded, one validation)',
      value: large.hwm,
      unit: 'bytes',
    },
    {
      id: 'large-xmllint-hwm',
      label: '24 MiB invoice: xmllint child (VmHWM, sampled)',
      value: large.childPeakHwm,
      unit: 'bytes',
    },
  );
  const largeTotal = large.hwm + large.childPeakHwm;
  for (const n of [cpuNote('single-thread pass', single), cpuNote(`pool pass (${poolSize} workers)`, pool)])
    if (n) result.notes.push(n);
  result.notes.push(
    'single docs/s = runs ÷ their summed time; pool docs/s = jobs ÷ wall time from the first to the last answer (after one warm-up job per worker)',
    `Saxon-HE per document = (time of one JVM run over N copies − one run over 1 copy) ÷ (N − 1), per stylesheet, via scripts/rules/lib/reference.js: JVM start and compile excluded, JIT warm-up included; "1st doc" is the cold run (JVM start + compile + 1 document). Saxon-HE does no XSD validation, so only the business rules compare`,
    `load average ${loadStart.map((v) => v.toFixed(2)).join(' ')} at the start of the suite, ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')} at the end (1/5/15 min) on ${os.cpus().length} cores`,
  );

  result.targets.push(
    {
      id: 'compiled-vs-saxon-he',
      label: `business rules, compiled ÷ Saxon-HE (docs/s; lowest of the four documents; per document ${compiledHeRatios.map((r) => r.toFixed(2)).join(' / ')})`,
      measured: Number(Math.min(...compiledHeRatios).toFixed(2)),
      unit: '×',
      target: 1,
      atLeast: true,
      pass: Math.min(...compiledHeRatios) >= 1,
    },
    {
      id: 'compiled-vs-saxon-js',
      label: `business rules, compiled ÷ SaxonJS (docs/s; lowest of the four documents; per document ${compiledJsRatios.map((r) => r.toFixed(1)).join(' / ')})`,
      measured: Number(Math.min(...compiledJsRatios).toFixed(1)),
      unit: '×',
      target: 10,
      atLeast: true,
      pass: Math.min(...compiledJsRatios) >= 10,
    },
    ...(thousand
      ? [
          {
            id: 'thousand-lines-cpu',
            label: `whole validation (detect + XSD + rules) of the ${thousand.lines}-line invoice, CPU per document`,
            measured: Number(thousand.validate.cpuMsPerDoc.toFixed(1)),
            unit: 'ms',
            target: 300,
            pass: thousand.validate.cpuMsPerDoc < 300,
          },
        ]
      : []),
    {
      id: 'pool-throughput-ratio',
      label: `pool throughput ÷ single-thread throughput (${poolSize} workers, geometric mean of the four documents; lowest ${Math.min(...ratios).toFixed(2)}×)`,
      measured: Number(geomean(ratios).toFixed(2)),
      unit: '×',
      target: TARGET_POOL_RATIO,
      atLeast: true,
      pass: geomean(ratios) >= TARGET_POOL_RATIO,
    },
    {
      id: 'large-rss',
      label: 'peak RSS validating a 24 MiB invoice (process VmHWM + xmllint child VmHWM)',
      measured: largeTotal,
      unit: 'bytes',
      target: TARGET_LARGE_RSS,
      pass: largeTotal < TARGET_LARGE_RSS,
    },
  );
  result.validation = { poolSize, single, pool, saxon, large, profile: prof };
  return result;
}

module.exports = {
  name: 'validation',
  title: 'Validation: latency, worker-pool throughput, memory, and Saxon-HE as the reference (no servers)',
  servers: false,
  run,
  saxonHe,
};
