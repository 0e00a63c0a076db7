#!/usr/bin/env node
'use strict';
// `npm run bench`: build dist, start the local servers, run the suites in bench/*.bench.js in order, print the figures
// with the environment they were measured in, and write them to bench/results/latest.json.
// Options: --only <suite> (repeatable or comma-separated), --quick (short passes, a smoke check), --profile (CPU
// profiles of the API and worker over each suite's main pass, summarised in the report), --help.
// Targets missed are reported as MISS and do not fail the run; a broken run (a server that does not start, a
// non-2xx answer under load, a crashed process) exits 1.

const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const services = require('./lib/services');
const { findServerPids } = require('../bench/lib/cpu');

const ROOT = services.REPO_ROOT;
const BENCH_DIR = path.join(ROOT, 'bench');
const RESULTS_DIR = path.join(BENCH_DIR, 'results');
const RESULTS_FILE = path.join(RESULTS_DIR, 'latest.json');
// A hung server or load pass must still end; the full run takes about 40–45 minutes on 2 cores.
const RUN_TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS) || 55 * 60_000;

const USAGE = `Usage: npm run bench -- [--only <suite>[,<suite>...]] [--quick] [--profile]

  --only <suite>  run only these suites (${listSuites()
    .map((s) => s.name)
    .join(', ')})
  --quick         short passes: a smoke check of the benchmark, not figures to quote
  --profile       CPU-profile the API and worker during each suite's main pass (bench/results/profiles/)
                  and summarise where their time went
`;

function say(msg) {
  process.stderr.write(`[bench] ${msg}\n`);
}

function listSuites() {
  return fs
    .readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.bench.js'))
    .sort()
    .map((f) => ({ name: f.slice(0, -'.bench.js'.length), file: path.join(BENCH_DIR, f) }));
}

function parseArgs(argv) {
  const opts = { only: [], quick: false, profile: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') opts.quick = true;
    else if (a === '--profile') opts.profile = true;
    else if (a === '--help' || a === '-h') opts.help = true;
    else if (a === '--only' || a.startsWith('--only=')) {
      const v = a === '--only' ? argv[++i] : a.slice('--only='.length);
      if (!v) throw new Error('--only needs a suite name');
      opts.only.push(
        ...v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );
    } else throw new Error(`unknown argument "${a}"\n${USAGE}`);
  }
  return opts;
}

function resolveBin(pkg, binName) {
  const dir = path.join(ROOT, 'node_modules', pkg);
  const { bin } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  return path.join(dir, typeof bin === 'string' ? bin : bin[binName]);
}

function build() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [resolveBin('typescript', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', () => resolve(1));
    child.on('exit', (code) => resolve(code === null ? 1 : code));
  });
}

function execText(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 10_000, ...opts }, (err, stdout) =>
      resolve(err ? undefined : String(stdout).trim()),
    );
  });
}

/** What the database server says it is; FerretDB answers buildInfo with its own version next to the emulated one. */
async function describeDatabase(svc) {
  let info;
  try {
    const { MongoClient } = require(require.resolve('mongodb', { paths: [ROOT] }));
    const client = new MongoClient(svc.mongodbUri, { serverSelectionTimeoutMS: 5000 });
    try {
      await client.connect();
      info = await client.db('admin').command({ buildInfo: 1 });
    } finally {
      await client.close().catch(() => {});
    }
  } catch {
    // described from the provider alone
  }
  const fromEnv = svc.providers.database === 'env';
  const isFerret = Boolean(info && info.ferretdbVersion) || /ferretdb/i.test(svc.providers.database);
  if (isFerret) {
    // The embedded build reports "unknown"; the wrapper's go.mod pins the version it was built from.
    let version = info && info.ferretdbVersion !== 'unknown' ? info.ferretdbVersion : undefined;
    if (!version && !fromEnv) {
      const m = /github\.com\/FerretDB\/FerretDB\s+(v\S+)/.exec(
        fs.readFileSync(path.join(services.FERRETDB_SRC_DIR, 'go.mod'), 'utf8'),
      );
      version = m ? m[1] : undefined;
    }
    const how = fromEnv
      ? 'from MONGODB_URI'
      : services.localDbBackend() === 'postgres'
        ? 'PostgreSQL 15 backend (private cluster), tools/ferretdb wrapper'
        : 'SQLite backend, tools/ferretdb wrapper, data in a temp dir';
    return `FerretDB ${version || '(version unknown)'} (${how}${info ? `; reports MongoDB ${info.version}` : ''})`;
  }
  if (info) return `MongoDB ${info.version} (${fromEnv ? 'from MONGODB_URI' : `mongod on PATH, data in a temp dir`})`;
  return `${svc.providers.database} (version unknown)`;
}

async function describeTemporal(svc) {
  if (svc.providers.temporal === 'env') return `server at TEMPORAL_ADDRESS=${svc.temporalAddress}`;
  const cli = svc.providers.temporal.replace(/^temporal CLI /, '');
  const version = await execText(cli, ['--version'], { env: services.temporalChildEnv() });
  const gc = services.temporalServerEnv();
  return (
    `Temporal CLI dev server (${version || cli}; in-memory SQLite; GOGC=${gc.GOGC} ` +
    `GOMEMLIMIT=${gc.GOMEMLIMIT}) at ${svc.temporalAddress}`
  );
}

async function environment(svc, opts) {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0] ? cpus[0].model.trim() : 'unknown',
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    database: svc ? await describeDatabase(svc) : 'not started (the suites run need no servers)',
    temporal: svc ? await describeTemporal(svc) : 'not started (the suites run need no servers)',
    autocannon: require('autocannon/package.json').version,
    // Other programs on a shared machine take cores from the gateway; the figures are only comparable at low load.
    loadAverage: { start: os.loadavg() },
    mode: opts.quick ? 'quick (short passes; a smoke check)' : 'full',
  };
}

/** The report's view of one profile a suite wrote: where the busy time went, as text and as data. */
function summarizeProfileFile(suite, { process: proc, file, pass }) {
  const { summarizeFile, renderProfile } = require('../bench/lib/cpuprofile');
  const rel = path.relative(ROOT, file);
  const heading = `[${suite}] ${proc} process during ${pass}`;
  try {
    const summary = summarizeFile(file, ROOT);
    return {
      suite,
      process: proc,
      pass,
      file: rel,
      text: `${heading}\n${renderProfile(rel, summary)}`,
      busyMs: summary.busyMs,
      origin: summary.origin,
      self: summary.self.slice(0, 40),
      inclusive: summary.inclusive.slice(0, 40),
    };
  } catch (e) {
    return { suite, process: proc, pass, file: rel, text: `${heading}\n${rel}: unreadable (${e.message})` };
  }
}

async function main() {
  const t0 = Date.now();
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    say(e.message);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const all = listSuites();
  const unknown = opts.only.filter((n) => !all.some((s) => s.name === n));
  if (unknown.length) {
    say(`unknown suite(s): ${unknown.join(', ')}; available: ${all.map((s) => s.name).join(', ')}`);
    return 2;
  }
  const suites = opts.only.length ? all.filter((s) => opts.only.includes(s.name)) : all;

  const watchdog = setTimeout(() => {
    say(`run exceeded ${Math.round(RUN_TIMEOUT_MS / 60_000)} min (BENCH_TIMEOUT_MS); aborting`);
    // The exit handlers of the service supervisor and the reaper stop every child.
    process.exit(1);
  }, RUN_TIMEOUT_MS);
  watchdog.unref();

  say('building (tsc -p tsconfig.build.json)');
  const buildCode = await build();
  if (buildCode !== 0) {
    say('build failed; nothing measured');
    return 1;
  }

  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-gateway-bench-'));
  const cpuProfileDir = opts.profile ? path.join(RESULTS_DIR, 'profiles') : undefined;
  const report = {
    startedAt: new Date(t0).toISOString(),
    resultsFile: path.relative(ROOT, RESULTS_FILE),
    suites: [],
    profiles: [],
  };
  let ok = true;
  for (const s of suites) {
    const mod = require(s.file);
    const entry = { name: mod.name || s.name, title: mod.title || s.name };
    // Fresh servers for every suite: FerretDB keeps running queries for clients that are gone, so one suite's
    // leftovers would otherwise load the next one's figures.
    let svc;
    // A suite that exports `servers: false` (validation) runs without them.
    if (mod.servers !== false) {
      try {
        // Go servers (Temporal, FerretDB) print one line per garbage collection to their logs, so suites can line
        // their slow moments up with the servers' collections (bench/lib/stalls.js readGoGcTrace).
        process.env.GODEBUG = [process.env.GODEBUG, 'gctrace=1'].filter(Boolean).join(',');
        // Temporal's own metrics on a known port, so suites can read what the server did in a pass.
        svc = await services.startServices({
          ui: false,
          handleSignals: true,
          ports: { temporalMetrics: await services.getFreePort() },
        });
      } catch (e) {
        say(`could not start the local servers:\n${e.message}`);
        entry.error = `local servers did not start: ${e.message}`;
        report.suites.push(entry);
        ok = false;
        break;
      }
    }
    const started = Date.now();
    try {
      if (!report.environment) report.environment = await environment(svc, opts);
      const serverPids = svc ? findServerPids() : {};
      say(
        svc
          ? `${entry.name}: servers Temporal ${svc.temporalAddress}, database ${svc.mongodbUri}`
          : `${entry.name}: no servers needed`,
      );
      Object.assign(
        entry,
        await mod.run({ svc, serverPids, cores: os.cpus().length, quick: opts.quick, logDir, cpuProfileDir, log: say }),
      );
    } catch (e) {
      entry.error = e && e.message ? e.message : String(e);
      say(`${s.name} broke: ${entry.error}`);
    } finally {
      if (svc) await svc.stop();
    }
    entry.seconds = Math.round((Date.now() - started) / 1000);
    if (entry.error || (entry.problems && entry.problems.length)) ok = false;
    report.suites.push(entry);
    for (const p of entry.profiles || []) report.profiles.push(summarizeProfileFile(entry.name, p));
  }
  if (report.environment) report.environment.loadAverage.end = os.loadavg();
  report.finishedAt = new Date().toISOString();
  report.seconds = Math.round((Date.now() - t0) / 1000);
  report.ok = ok;
  fs.writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(require('../bench/lib/report').renderReport(report));
  // Kept when the run broke, or when asked (BENCH_KEEP_LOGS=1: the stall and side-pass files for a closer look).
  if (ok && process.env.BENCH_KEEP_LOGS !== '1') fs.rmSync(logDir, { recursive: true, force: true });
  else say(`process logs kept in ${logDir}`);
  say(`done in ${report.seconds}s`);
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    say(`failed: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  },
);
