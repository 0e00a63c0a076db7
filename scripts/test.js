#!/usr/bin/env node
'use strict';
// `npm test`: build/find the local servers, start them with throw-away state, type-check, run every jest project
// against them, stop them, and end with a one-line summary. Extra arguments go to jest
// (`npm test -- test/unit`); `--no-typecheck` (consumed here) skips the tsc gate.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const services = require('./lib/services');

const WORKFLOW_BUNDLE = path.join(__dirname, '..', 'dist', 'workflow-bundle.js');

const ROOT = services.REPO_ROOT;
// A hung run (an open handle keeping jest alive, a stuck server) must still end in CI.
const RUN_TIMEOUT_MS = Number(process.env.TEST_RUN_TIMEOUT_MS) || 45 * 60_000;

function say(msg) {
  process.stderr.write(`[test] ${msg}\n`);
}

/** The JS file behind a package's bin entry; packages' "exports" often hide their bin paths from require.resolve. */
function resolveBin(pkg, binName) {
  const dir = path.join(ROOT, 'node_modules', pkg);
  const { bin } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const rel = typeof bin === 'string' ? bin : bin && bin[binName];
  if (!rel) throw new Error(`${pkg} has no "${binName}" executable; run npm ci`);
  return path.join(dir, rel);
}

let current; // the running tsc or jest child, so signals can reach it
let outDir; // jest's results file lives here; removed on every way out

function run(label, args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
    current = child;
    child.on('error', (err) => {
      say(`${label} could not start: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      current = undefined;
      resolve(code === null ? (signal === 'SIGINT' ? 130 : 1) : code);
    });
  });
}

/** jest's --json output, or undefined when jest wrote none. */
function readResults(resultsFile) {
  try {
    return JSON.parse(fs.readFileSync(resultsFile, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Counts over one or more jest --json outputs; suites that crashed before running tests count as failures. */
function summarize(results) {
  const sum = (key) => results.reduce((n, r) => n + (r[key] || 0), 0);
  const passed = sum('numPassedTests');
  const failed = sum('numFailedTests') + sum('numRuntimeErrorTestSuites');
  const skipped = sum('numPendingTests') + sum('numTodoTests');
  return `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
}

function hasWorkerFlag(args) {
  return args.some((a) => a === '-i' || a === '--runInBand' || a.startsWith('-w') || a.startsWith('--maxWorkers'));
}

function selectsProjects(args) {
  return args.some((a) => a === '--selectProjects' || a.startsWith('--selectProjects='));
}

/**
 * The jest runs, in order. The server-backed projects share one set of servers and one database, and their suites
 * measure real time, so they run in band. The unit project needs no server and is CPU-bound: it runs first, on one
 * worker per core (at most two), which takes minutes off the run. Arguments that choose projects or workers
 * themselves get one run with exactly those arguments.
 */
function jestPhases(jestArgs) {
  if (hasWorkerFlag(jestArgs) || selectsProjects(jestArgs)) {
    return [{ label: 'jest', args: hasWorkerFlag(jestArgs) ? jestArgs : ['--runInBand', ...jestArgs] }];
  }
  const unitWorkers = Math.max(1, Math.min(2, os.availableParallelism()));
  // Paths given for one project match nothing in the other; only no tests at all is a failure (checked after).
  return [
    { label: 'jest (unit)', args: ['--selectProjects', 'unit', `--maxWorkers=${unitWorkers}`, '--passWithNoTests'] },
    {
      label: 'jest (api, integration)',
      args: ['--selectProjects', 'api', 'integration', '--runInBand', '--passWithNoTests'],
    },
  ].map((p) => ({ ...p, args: [...p.args, ...jestArgs] }));
}

async function main() {
  const argv = process.argv.slice(2);
  const typecheck = !argv.includes('--no-typecheck');
  const jestArgs = argv.filter((a) => a !== '--no-typecheck');
  const t0 = Date.now();

  let svc;
  let stopping = false;
  const shutdown = async (sig) => {
    if (stopping) return;
    stopping = true;
    say(`${sig}: stopping`);
    if (current) current.kill('SIGTERM');
    if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
    if (svc) await svc.stop();
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  const watchdog = setTimeout(() => {
    say(`run exceeded ${Math.round(RUN_TIMEOUT_MS / 60_000)} min (TEST_RUN_TIMEOUT_MS); aborting`);
    void shutdown('SIGTERM');
  }, RUN_TIMEOUT_MS);
  watchdog.unref();

  try {
    await services.ensureTools();
  } catch (err) {
    say(`cannot provide the test servers:\n${err.message}`);
    return 1;
  }

  const baseEnv = { ...process.env, CI: process.env.CI || 'true', NODE_ENV: 'test' };

  // Type-checking is CPU-bound and server start-up mostly waits, so they overlap. The same tsc run emits dist/,
  // which the process-level tests (worker restart) start as real child processes.
  const tsc = typecheck
    ? run('tsc', [resolveBin('typescript', 'tsc'), '-p', 'tsconfig.json'], baseEnv)
    : Promise.resolve(0);
  const started = services.startServices({ ui: false, handleSignals: false }).then(
    (s) => {
      svc = s;
      return s;
    },
    (err) => err,
  );
  // The validation tests need the official rule packs (transforms/rules-manifest.json) and its official test documents
  // (`samples`): fetched and compiled once into the cache outside git, a no-op when the cache is warm.
  const rules = run('rules:fetch', [path.join(__dirname, 'rules', 'fetch.js'), '--samples'], baseEnv);
  // The phase4 interop tests need the Java harness (Maven Central, once); built here so its first resolve does not
  // run inside a test's time limit.
  // After rules:fetch, not beside it: both run Maven, and Maven 3.8 does not guard its local repository against two
  // processes downloading the same artefact at once.
  const harness = rules.then((code) =>
    code === 0 ? run('phase4 harness', [path.join(__dirname, 'phase4-harness.js'), '--quiet'], baseEnv) : 0,
  );
  // The Factur-X PDF/A tests check our PDFs with veraPDF (Java, Maven Central once); after the phase4 harness for the
  // same reason (one Maven at a time).
  const verapdf = harness.then((code) =>
    code === 0 ? run('veraPDF harness', [path.join(__dirname, 'verapdf-harness.js'), '--quiet'], baseEnv) : 0,
  );
  // The workflow branch tests run on Temporal's time-skipping test server (Java, Maven Central once); after veraPDF,
  // one Maven at a time.
  const testServer = verapdf.then((code) =>
    code === 0 ? run('Temporal test server', [path.join(__dirname, 'temporal-test-server.js'), '--quiet'], baseEnv) : 0,
  );
  const [tscCode, svcOrErr, rulesCode, harnessCode, verapdfCode, testServerCode] = await Promise.all([
    tsc,
    started,
    rules,
    harness,
    verapdf,
    testServer,
  ]);
  if (svcOrErr instanceof Error) {
    say(`could not start the test servers; server-backed tests cannot run:\n${svcOrErr.message}`);
    return 1;
  }
  const soFar = Math.round((Date.now() - t0) / 1000);
  say(`servers: Temporal ${svc.temporalAddress}, database ${svc.mongodbUri} (${soFar}s so far)`);

  let code;
  try {
    if (tscCode !== 0) {
      say('type check failed (tsc -p tsconfig.json); jest not run');
      return tscCode;
    }
    if (rulesCode !== 0) {
      say('npm run rules:fetch failed; the validation tests cannot run without the rule packs');
      return rulesCode;
    }
    if (harnessCode !== 0) {
      say('the phase4 harness could not be built (node scripts/phase4-harness.js); the AS4 interop tests cannot run');
      return harnessCode;
    }
    if (verapdfCode !== 0) {
      say('the veraPDF harness could not be built (node scripts/verapdf-harness.js); the PDF/A tests cannot run');
      return verapdfCode;
    }
    if (testServerCode !== 0) {
      say('the Temporal test server could not be prepared (node scripts/temporal-test-server.js)');
      return testServerCode;
    }
    // The SDK bundler is the last determinism guard: it refuses workflow code that imports Node built-ins.
    const bundleCode = typecheck
      ? await run('workflow bundle', [path.join(__dirname, 'build-workflow-bundle.js'), WORKFLOW_BUNDLE], baseEnv)
      : 0;
    if (bundleCode !== 0) {
      say('workflow bundle failed; jest not run');
      return bundleCode;
    }
    const jestBin = resolveBin('jest', 'jest');
    outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-gateway-jest-'));
    const jestEnv = {
      ...baseEnv,
      TEMPORAL_ADDRESS: svc.temporalAddress,
      MONGODB_URI: svc.mongodbUri,
      // Only a bundle this run built: one left from an earlier build would run yesterday's workflow code.
      ...(typecheck ? { TEST_WORKFLOW_BUNDLE: WORKFLOW_BUNDLE } : {}),
    };
    const phases = jestPhases(jestArgs);
    const results = [];
    code = 0;
    for (const [i, phase] of phases.entries()) {
      const resultsFile = path.join(outDir, `results-${i}.json`);
      const phaseCode = await run(
        phase.label,
        [jestBin, '--json', '--outputFile', resultsFile, ...phase.args],
        jestEnv,
      );
      const r = readResults(resultsFile);
      if (r === undefined) {
        say(`${phase.label} wrote no results (exit ${phaseCode})`);
        if (code === 0) code = phaseCode || 1;
      } else {
        results.push(r);
        if (code === 0) code = phaseCode;
      }
    }
    if (phases.length > 1 && results.length === phases.length && results.every((r) => !r.numTotalTestSuites)) {
      say('no tests found');
      if (code === 0) code = 1;
    }
    if (results.length > 0) process.stdout.write(`${summarize(results)}\n`);
  } finally {
    if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
    await svc.stop();
  }
  say(`done in ${Math.round((Date.now() - t0) / 1000)}s`);
  return code;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    say(`failed: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  },
);
