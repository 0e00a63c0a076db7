'use strict';
// Transformation benchmark: the gateway's transformDocument (UBL 2.1 → CII D16B and CII D16B → UBL 2.1, EN 16931
// targets) against the reference Java converters (phax en16931-ubl2cii and en16931-cii2ubl, from Maven Central, run
// by tools/en16931-converter-harness), on valid EN 16931 invoices of about 10 KiB, about 100 KiB and with 1,000 lines.
// Both sides are timed the same way, one after the other in the same run: document bytes in memory → parse → convert
// → serialised XML, on one thread, after a warm-up, for as many runs as a time budget allows. Needs no servers.
// Target: ours at least as fast as the Java converters per document at 10 KiB and 100 KiB, both directions.
// Without Maven or a JDK the Java side is skipped with the reason, and the targets are not judged.

const { execFile, fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { formatBytes } = require('./lib/invoices');
const { transformDocuments } = require('./lib/transform-documents');
const { ensureConverterHarness } = require('../scripts/en16931-converter-harness');

const RUNNER = path.join(__dirname, 'lib', 'transform-runner.js');
const TARGET_SIZES = ['10 KiB', '100 KiB'];
const DIRECTIONS = { ubl2cii: 'UBL → CII', cii2ubl: 'CII → UBL' };

const PLANS = {
  // rounds: the two sides take turns (ours, Java, ours, Java, ...), so a slow minute on a shared machine hits both
  // rather than one; each side is judged on its best round (the one least disturbed by other programs).
  full: { rounds: 3, warmup: 200, warmupLarge: 20, minRuns: 10, maxRuns: 5000, budgetMs: 2500 },
  quick: { rounds: 1, warmup: 10, warmupLarge: 2, minRuns: 2, maxRuns: 200, budgetMs: 300 },
};

function fmt(v) {
  if (v === undefined || Number.isNaN(v)) return '-';
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v.toFixed(3);
}

/** Ours, in a child process of its own (so a --profile run profiles only the conversions). */
function runOurs(plan, files, cpuProfileDir, log) {
  return new Promise((resolve, reject) => {
    const execArgv = cpuProfileDir
      ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`, '--cpu-prof-name=transform-ours.cpuprofile']
      : [];
    const child = fork(RUNNER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
    let answer;
    child.on('message', (m) => (answer = m));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (!answer) return reject(new Error(`transform runner exited (${signal || code}) without an answer`));
      if (!answer.ok) return reject(new Error(`transform runner failed: ${answer.error}`));
      resolve(answer);
    });
    log('transform: ours (transformDocument, one thread)');
    child.send({ plan, files });
  });
}

/** The Java converters over the same files, in one JVM (start-up and class loading fall in the warm-up). */
function runJava(harness, plan, files, log) {
  const args = [
    '-cp',
    harness.classpath,
    harness.mainClass,
    '--warmup',
    String(plan.warmup),
    '--min-runs',
    String(plan.minRuns),
    '--max-runs',
    String(plan.maxRuns),
    '--budget-ms',
    String(plan.budgetMs),
    ...files.map((f) => `${f.direction}=${f.file}`),
  ];
  // The large documents get the smaller warm-up: the harness takes one count, so they run as their own JVM call.
  return new Promise((resolve, reject) => {
    log('transform: Java converters (en16931-ubl2cii, en16931-cii2ubl)');
    execFile(harness.java, args, { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 }, (err, stdout, stderr) => {
      if (err)
        return reject(
          new Error(
            `Java converter harness failed: ${String(stderr).trim().split('\n').slice(-8).join('\n') || err.message}`,
          ),
        );
      try {
        resolve(JSON.parse(String(stdout).trim().split('\n').pop()));
      } catch (e) {
        reject(new Error(`Java converter harness printed no JSON: ${e.message}`));
      }
    });
  });
}

async function javaSide(harness, plan, files, log) {
  const small = files.filter((f) => f.bytes <= 200_000);
  const large = files.filter((f) => f.bytes > 200_000);
  const a = small.length ? await runJava(harness, plan, small, log) : { documents: [] };
  const b = large.length
    ? await runJava(harness, { ...plan, warmup: plan.warmupLarge }, large, log)
    : { documents: [] };
  const byFile = new Map([...a.documents, ...b.documents].map((d) => [`${d.direction}:${d.file}`, d]));
  return { java: a.java || b.java, documents: files.map((f) => byFile.get(`${f.direction}:${path.basename(f.file)}`)) };
}

/** Per document, the round with the most documents per second (all of that round's figures, kept together). */
function bestRounds(rounds) {
  const first = rounds[0];
  return {
    ...first,
    documents: first.documents.map((_, k) =>
      rounds.map((r) => r.documents[k]).reduce((a, b) => (b.docsPerS > a.docsPerS ? b : a)),
    ),
  };
}

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { figures: [], tables: [], targets: [], notes: [], problems: [] };
  const loadStart = os.loadavg();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-gateway-transform-'));
  try {
    const docs = transformDocuments();
    const files = docs.map((d, k) => {
      const file = path.join(
        tmp,
        `${String(k).padStart(2, '0')}-${d.direction}-${d.name.replace(/[^0-9A-Za-z]+/g, '-')}.xml`,
      );
      fs.writeFileSync(file, d.body);
      return { direction: d.direction, file, bytes: d.body.length };
    });

    const harness = ensureConverterHarness(process.env, ctx.log);
    if (harness.unavailable) {
      ctx.log(`transform: Java converters skipped: ${harness.unavailable}`);
      result.notes.push(`Java converters NOT measured: ${harness.unavailable}`);
    }
    const ourRounds = [];
    const javaRounds = [];
    for (let round = 0; round < plan.rounds; round++) {
      if (plan.rounds > 1) ctx.log(`transform: round ${round + 1} of ${plan.rounds}`);
      // Profile only the first round of ours: one profile per pass is what the report shows.
      ourRounds.push(await runOurs(plan, files, round === 0 ? ctx.cpuProfileDir : undefined, ctx.log));
      if (!harness.unavailable) javaRounds.push(await javaSide(harness, plan, files, ctx.log));
    }
    const ours = bestRounds(ourRounds);
    const java = javaRounds.length > 0 ? bestRounds(javaRounds) : undefined;
    const roundsTable = plan.rounds > 1 && {
      title:
        'documents per second in each round (sides alternating, ours first); the best round of each side is judged',
      header: [
        'conversion',
        'document',
        ...ourRounds.flatMap((_, r) => [`ours r${r + 1}`, ...(java ? [`Java r${r + 1}`] : [])]),
      ],
      rows: docs.map((d, k) => [
        DIRECTIONS[d.direction],
        d.name,
        ...ourRounds.flatMap((o, r) => [
          fmt(o.documents[k].docsPerS),
          ...(java ? [fmt(javaRounds[r].documents[k].docsPerS)] : []),
        ]),
      ]),
    };

    const rows = docs.map((d, k) => {
      const o = ours.documents[k];
      const j = java ? java.documents[k] : undefined;
      const ratio = j ? o.docsPerS / j.docsPerS : undefined;
      const cpuRatio = j ? j.cpuMsPerDoc / o.cpuMsPerDoc : undefined;
      return { d, o, j, ratio, cpuRatio };
    });
    result.tables.push({
      title:
        'transformDocument (ours, Node, one thread) vs the phax converters (Java, one thread): latency per document and throughput',
      header: [
        'conversion',
        'document',
        'in',
        'lines',
        'ours p50 ms',
        'ours p99 ms',
        'ours docs/s',
        'ours CPU ms',
        'Java p50 ms',
        'Java p99 ms',
        'Java docs/s',
        'Java CPU ms',
        'ours ÷ Java',
        'CPU ratio',
      ],
      rows: rows.map(({ d, o, j, ratio, cpuRatio }) => [
        DIRECTIONS[d.direction],
        d.name,
        formatBytes(d.body.length),
        String(d.lines),
        fmt(o.p50Ms),
        fmt(o.p99Ms),
        fmt(o.docsPerS),
        fmt(o.cpuMsPerDoc),
        j ? fmt(j.p50Ms) : '-',
        j ? fmt(j.p99Ms) : '-',
        j ? fmt(j.docsPerS) : '-',
        j ? fmt(j.cpuMsPerDoc) : '-',
        ratio ? `${ratio.toFixed(2)}×` : '-',
        cpuRatio ? `${cpuRatio.toFixed(2)}×` : '-',
      ]),
    });
    if (roundsTable) result.tables.push(roundsTable);
    for (const { d, o, j, ratio, cpuRatio } of rows) {
      if (!TARGET_SIZES.includes(d.name)) continue;
      result.targets.push({
        id: `transform-${d.direction}-${d.name.replace(/\s+/g, '').toLowerCase()}`,
        label: `${DIRECTIONS[d.direction]} ${d.name}: ours ÷ Java converters, documents per second (ours ${fmt(o.docsPerS)}, Java ${j ? fmt(j.docsPerS) : '-'}; CPU ms/doc ours ${fmt(o.cpuMsPerDoc)}, Java ${j ? fmt(j.cpuMsPerDoc) : '-'}, CPU ratio ${cpuRatio ? cpuRatio.toFixed(2) : '-'})`,
        measured: ratio === undefined ? '-' : Number(ratio.toFixed(2)),
        unit: '×',
        target: 1,
        atLeast: true,
        ...(ratio === undefined ? { why: 'Java converters not measured' } : { pass: ratio >= 1 }),
      });
    }
    result.notes.push(
      `documents: UBL = the validation suite's (${'en16931/ubl-examples/ubl-tc434-example4.xml'} with generated lines and recomputed totals); CII = the same content written by our UBL → CII path, as many lines as fit the size; both padded with whitespace to the exact size: ` +
        docs
          .map((d) => `${DIRECTIONS[d.direction]} ${d.name} = ${formatBytes(d.body.length)}, ${d.lines} line(s)`)
          .join('; '),
      `ours: transformDocument from dist/ (detect, parse, read into the EN 16931 model, target checks, write), Node ${ours.node}, main thread of a child process; Java: ${java ? `Java ${java.java}, ` : ''}en16931-ubl2cii UBL21InvoiceToCIID16BConverter / en16931-cii2ubl CIIToUBL21Converter with the ph-ubl / ph-cii JAXB readers and writers (bytes → object tree → converted tree → bytes), XML Schema validation on reading off as ours does none`,
      `each side, each round: a fresh process, ${plan.warmup} warm-up conversions (${plan.warmupLarge} for the 1,000-line documents), then runs until ${plan.budgetMs} ms are spent (${plan.minRuns}–${plan.maxRuns}); docs/s = runs ÷ their summed time; CPU ms = CPU time of the converting process (every thread: Node's or the JVM's GC and JIT included) over the timed runs ÷ runs, less sensitive to other load than wall time; ${plan.rounds} round(s), ours then Java in each; per document and side the round with the most docs/s is the one shown and judged`,
      `load average ${loadStart.map((v) => v.toFixed(2)).join(' ')} at the start of the suite, ${os
        .loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')} at the end (1/5/15 min) on ${os.cpus().length} cores`,
    );
    result.transform = {
      plan,
      ours: ours.documents,
      java: java ? java.documents : undefined,
      javaVersion: java ? java.java : undefined,
    };
    if (ctx.cpuProfileDir) {
      const file = path.join(ctx.cpuProfileDir, 'transform-ours.cpuprofile');
      if (fs.existsSync(file)) result.profiles = [{ process: 'transform runner', file, pass: 'ours, all documents' }];
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return result;
}

module.exports = {
  name: 'transform',
  title: 'Transformation: UBL ↔ CII latency and throughput, ours vs the phax EN 16931 converters (Java) (no servers)',
  servers: false,
  run,
};
