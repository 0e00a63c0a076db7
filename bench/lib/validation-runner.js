'use strict';
// Child process of the validation suite (bench/validation.bench.js), so that each pass has a process of its own and
// its peak RSS (VmHWM) is that pass's alone. Runs the compiled gateway code from dist/. Started with fork(); gets
// { mode, plan, rulesDir, poolSize } over IPC and answers with one { ok, ... } message.
//   single: the Validator on the main thread, documents one after another: latency and throughput per document, and
//           the business rules alone (SaxonJS parse + Schematron packs) for the comparison with Saxon-HE.
//   pool:   the worker-thread pool (dist/src/validation/pool-worker.js), `poolSize` workers, kept saturated.
//   large:  one validation of the 24 MiB invoice.

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { clockTicks } = require('./cpu');
const memory = require('./memory');
const docs = require('./validation-documents');

const DIST = path.resolve(__dirname, '..', '..', 'dist', 'src', 'validation');

/** CPU milliseconds of this process (every thread) plus its waited-for children (the xmllint runs). */
function cpuMs() {
  const u = process.cpuUsage();
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (u.user + u.system) / 1000 + ((Number(f[13]) + Number(f[14])) * 1000) / clockTicks();
}

function percentile(sorted, p) {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Runs `once` until `budgetMs` is spent (at least minRuns, at most maxRuns); returns the sorted run times. */
async function timed(once, { minRuns, maxRuns, budgetMs }) {
  const runs = [];
  const start = performance.now();
  while (runs.length < minRuns || (runs.length < maxRuns && performance.now() - start < budgetMs)) {
    const t = performance.now();
    await once();
    runs.push(performance.now() - t);
  }
  return runs.sort((a, b) => a - b);
}

function summary(runs) {
  const total = runs.reduce((a, b) => a + b, 0);
  return {
    runs: runs.length,
    p50Ms: percentile(runs, 50),
    p95Ms: percentile(runs, 95),
    maxMs: runs[runs.length - 1],
    docsPerS: (1000 * runs.length) / total,
  };
}

function assertValid(name, result) {
  if (!result.isValid) {
    const first = result.assertions
      .slice(0, 3)
      .map((a) => `${a.ruleId} ${a.text}`)
      .join(' | ');
    throw new Error(
      `benchmark document "${name}" is not valid, so the figures would not be about valid invoices: ${first}`,
    );
  }
}

/** Both engines must answer the same, finding for finding, or the speed comparison means nothing. */
function assertSameFindings(name, a, b) {
  const strip = (r) =>
    JSON.stringify({ ...r, ruleSets: r.ruleSets.map(({ id, version, outcome }) => ({ id, version, outcome })) });
  if (strip(a) !== strip(b)) throw new Error(`benchmark document "${name}": the two validations disagree`);
  const fellBack = a.ruleSets.filter((r) => r.engine === 'saxon-js').map((r) => r.id);
  if (fellBack.length > 0)
    throw new Error(`benchmark document "${name}": packs ran on SaxonJS: ${fellBack.join(', ')}`);
}

async function single({ plan, rulesDir }) {
  const { createValidator } = require(path.join(DIST, 'validator.js'));
  const { parseForSaxon, runSchematronPack } = require(path.join(DIST, 'schematron.js'));
  const compiled = require(path.join(DIST, 'compiled', 'index.js'));
  const { parseXmlForReading } = require(path.join(DIST, '..', 'formats'));
  const v = createValidator({ rulesDir, rulesEngine: 'compiled' });
  const vSaxon = createValidator({ rulesDir, rulesEngine: 'saxon-js' });
  // The same validation with the XSD half on xmllint (a process per document) instead of libxml2 in process.
  const vXmllint = createValidator({ rulesDir, rulesEngine: 'compiled', xsdEngine: 'xmllint' });
  const out = [];
  for (const d of docs.benchmarkDocuments()) {
    // Warm-up: loads the packs and lets the JIT settle; also proves the document valid.
    const first = await v.validate(d.body);
    assertValid(d.name, first);
    const firstSaxon = await vSaxon.validate(d.body);
    assertSameFindings(d.name, first, firstSaxon);
    const c0 = cpuMs();
    const validate = summary(await timed(() => v.validate(d.body), plan.latency));
    validate.cpuMsPerDoc = (cpuMs() - c0) / validate.runs;
    assertSameFindings(d.name, first, await vXmllint.validate(d.body));
    const c2 = cpuMs();
    const validateXmllint = summary(await timed(() => vXmllint.validate(d.body), plan.latency));
    validateXmllint.cpuMsPerDoc = (cpuMs() - c2) / validateXmllint.runs;
    const c1 = cpuMs();
    const validateSaxon = summary(await timed(() => vSaxon.validate(d.body), plan.latency));
    validateSaxon.cpuMsPerDoc = (cpuMs() - c1) / validateSaxon.runs;
    // The business rules alone, as Saxon-HE runs them: parse, then every Schematron pack the validation used.
    const schematron = [];
    for (const r of first.ruleSets) {
      const pack = await v.store.get(r.id, r.version);
      if (pack.kind === 'schematron') schematron.push(pack);
    }
    const text = d.body.toString('utf8');
    const rulesOnly = summary(
      await timed(async () => {
        const doc = await parseForSaxon(text);
        for (const p of schematron) runSchematronPack(p, doc);
      }, plan.rulesOnly),
    );
    // The same packs compiled: parse (the scanner's read tree, as the validator does), XDM tree, every pack (each must
    // have compiled: no silent SaxonJS here).
    const programs = schematron.map((p) => {
      const c = compiled.compiledPack(p);
      if (!c.ok) throw new Error(`pack ${p.id} ${p.version} did not compile: ${c.reason}`);
      return c;
    });
    const rulesOnlyCompiled = summary(
      await timed(async () => {
        const tree = compiled.buildXdmTree(parseXmlForReading(text));
        for (const c of programs) compiled.runCompiledPack(c, tree);
      }, plan.rulesOnlyCompiled ?? plan.rulesOnly),
    );
    out.push({
      name: d.name,
      bytes: d.body.length,
      lines: d.lines,
      packs: first.ruleSets.map((r) => `${r.id} ${r.version}`),
      schematronPacks: schematron.map((p) => ({ id: p.id, version: p.version })),
      validate,
      validateXmllint,
      validateSaxon,
      rulesOnly,
      rulesOnlyCompiled,
    });
  }
  return { documents: out };
}

async function pool({ plan, rulesDir, poolSize }) {
  const { createValidatorPool } = require(path.join(DIST, 'pool.js'));
  const list = docs.benchmarkDocuments();
  const inFlight = 2 * poolSize;
  // Enough room for every job in flight: this pass measures throughput, not refusals.
  const p = createValidatorPool({ rulesDir, size: poolSize, maxQueue: inFlight, preload: ['ubl-2.1', 'en16931-ubl'] });
  const startMs = performance.now();
  await p.ready();
  const readyMs = performance.now() - startMs;
  const out = [];
  try {
    for (const d of list) {
      // Warm-up: every worker validates the document once.
      const warm = await Promise.all(Array.from({ length: poolSize }, () => p.validate(d.body)));
      for (const r of warm) assertValid(d.name, r);
      // Closed loop: `inFlight` jobs outstanding, so no worker waits for the main thread to hand it the next one.
      let done = 0;
      let started = 0;
      const c0 = cpuMs();
      const t0 = performance.now();
      const minJobs = Math.max(plan.pool.minJobs, inFlight);
      const more = () =>
        started < minJobs || (started < plan.pool.maxJobs && performance.now() - t0 < plan.pool.budgetMs);
      await new Promise((resolve, reject) => {
        const next = () => {
          if (!more()) {
            if (done === started) resolve();
            return;
          }
          started += 1;
          p.validate(d.body).then((r) => {
            assertValid(d.name, r);
            done += 1;
            next();
          }, reject);
        };
        for (let k = 0; k < inFlight; k++) next();
      });
      const wallMs = performance.now() - t0;
      out.push({
        name: d.name,
        bytes: d.body.length,
        jobs: done,
        wallMs,
        docsPerS: (1000 * done) / wallMs,
        cpuMsPerDoc: (cpuMs() - c0) / done,
      });
    }
    return { documents: out, readyMs, stats: p.stats() };
  } finally {
    await p.close();
  }
}

async function large({ rulesDir, bytes, lines }) {
  const { createValidator } = require(path.join(DIST, 'validator.js'));
  const d = docs.invoiceWithAttachment(bytes, lines);
  const v = createValidator({ rulesDir });
  const before = memory.readStatus(process.pid);
  const t = performance.now();
  const r = await v.validate(d.body);
  const ms = performance.now() - t;
  assertValid('24 MiB', r);
  return {
    bytes: d.body.length,
    lines: d.lines,
    attachmentBytes: d.attachmentBytes,
    ms,
    rssBefore: before.rss,
    ...memory.readStatus(process.pid),
  };
}

/**
 * Where the compiled rules spend their time: every check, rule's variables and the rule dispatch ("match") of
 * en16931-ubl timed on the benchmark documents (warm, the median of a few runs), so each entry's cost per invoice line
 * shows how it scales.
 */
async function profile({ rulesDir, top }) {
  const { createValidator } = require(path.join(DIST, 'validator.js'));
  const compiled = require(path.join(DIST, 'compiled', 'index.js'));
  const engine = require(path.join(DIST, 'compiled', 'engine.js'));
  const { parseXmlForReading } = require(path.join(DIST, '..', 'formats'));
  const v = createValidator({ rulesDir });
  const pack = await v.store.get('en16931-ubl');
  const c = compiled.compiledPack(pack);
  if (!c.ok) throw new Error(`en16931-ubl did not compile: ${c.reason}`);
  const perDoc = [];
  for (const d of docs.benchmarkDocuments()) {
    const tree = compiled.buildXdmTree(parseXmlForReading(d.body.toString('utf8')));
    for (let k = 0; k < 3; k++) compiled.runCompiledPack(c, tree);
    const runs = [];
    for (let k = 0; k < 3; k++) {
      const pr = new Map();
      for (const p of c.programs) engine.runProgram(p, tree, pr);
      runs.push(pr);
    }
    const keys = new Set(runs.flatMap((r) => [...r.keys()]));
    const entries = [...keys].map((key) => {
      const ms = runs.map((r) => (r.get(key) ? r.get(key).ms : 0)).sort((a, b) => a - b)[1];
      return { key, ms, count: runs[0].get(key) ? runs[0].get(key).count : 0 };
    });
    const total = entries.reduce((a, e) => a + e.ms, 0);
    perDoc.push({ name: d.name, lines: d.lines, total, entries });
  }
  const largest = perDoc.reduce((a, b) => (b.lines > a.lines ? b : a));
  const smallest = perDoc.reduce((a, b) => (b.lines < a.lines ? b : a));
  const rows = [...largest.entries]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, top)
    .map((e) => {
      const small = smallest.entries.find((x) => x.key === e.key);
      return {
        key: e.key,
        ms: e.ms,
        count: e.count,
        share: e.ms / largest.total,
        perLineUs: (1000 * e.ms) / largest.lines,
        smallMs: small ? small.ms : 0,
      };
    });
  return {
    documents: perDoc.map(({ name, lines, total }) => ({ name, lines, total })),
    largest: largest.name,
    smallest: smallest.name,
    rows,
  };
}

const MODES = { single, pool, large, profile };

process.once('message', (msg) => {
  const mode = MODES[msg.mode];
  Promise.resolve()
    .then(() => {
      if (!mode) throw new Error(`unknown mode ${msg.mode}`);
      return mode(msg);
    })
    .then(
      (result) => process.send({ ok: true, ...result, status: memory.readStatus(process.pid) }, () => process.exit(0)),
      (e) => process.send({ ok: false, error: e && e.stack ? e.stack : String(e) }, () => process.exit(1)),
    );
});
