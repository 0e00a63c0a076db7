#!/usr/bin/env node
'use strict';
// `npm start`: build, start Temporal (with its UI) and the database with state kept under var/, a local SMTP sink
// (mails kept under var/mail), seed a demo tenant, then run the API and the worker until Ctrl-C.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const services = require('./lib/services');
const { startSmtpSink } = require('./lib/smtp-sink');

const ROOT = services.REPO_ROOT;
const VAR_DIR = path.join(ROOT, 'var');
const SEED_TIMEOUT_MS = 120_000;
const API_READY_TIMEOUT_MS = 60_000;

function say(msg) {
  process.stderr.write(`[start] ${msg}\n`);
}

const WORKFLOW_BUNDLE = path.join(ROOT, 'dist', 'workflow-bundle.js');

function runNode(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', () => resolve(1));
    child.on('exit', (code) => resolve(code === null ? 1 : code));
  });
}

/** tsc to dist/, then the prebuilt workflow bundle the worker starts from. */
async function build() {
  const dir = path.join(ROOT, 'node_modules', 'typescript');
  const { bin } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const code = await runNode([path.join(dir, bin.tsc), '-p', 'tsconfig.build.json']);
  if (code !== 0) return code;
  return runNode([path.join(__dirname, 'build-workflow-bundle.js'), WORKFLOW_BUNDLE]);
}

/** Runs the seed command and returns its JSON; any failure is reported and yields undefined. */
function seedDemo(env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/main/admin.js'), 'seed-demo', '--json'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), SEED_TIMEOUT_MS);
    const fail = (why) => {
      say(`demo seed skipped: ${why}${err.trim() ? `\n${err.trim()}` : ''}`);
      resolve(undefined);
    };
    child.on('error', (e) => {
      clearTimeout(timer);
      fail(e.message);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return fail(signal ? `killed by ${signal}` : `admin seed-demo exited with ${code}`);
      // Logs may share stdout; the result is the last line that parses as a JSON object.
      const lines = out.trim().split('\n').reverse();
      for (const line of [out.trim(), ...lines]) {
        try {
          const v = JSON.parse(line);
          if (v && typeof v === 'object') return resolve(v);
        } catch {
          // try the next candidate
        }
      }
      return fail(`no JSON in its output: ${out.trim().slice(0, 500)}`);
    });
  });
}

async function main() {
  const t0 = Date.now();
  say('building (tsc -p tsconfig.build.json)');
  const buildCode = await build();
  if (buildCode !== 0) {
    say('build failed');
    return buildCode;
  }

  await services.ensureTools();
  const svc = await services.startServices({ persistentDir: VAR_DIR, ui: true, handleSignals: false });
  // The demo's mailbox: what the e-mail channel sends lands here as .eml files (open them in any mail client).
  const mailDir = path.join(VAR_DIR, 'mail');
  const mail = await startSmtpSink({ dir: mailDir });
  const port = process.env.PORT || '8080';
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: svc.temporalAddress,
    MONGODB_URI: svc.mongodbUri,
    PORT: port,
    SMTP_HOST: mail.host,
    SMTP_PORT: String(mail.port),
    // The sink is on loopback and offers no STARTTLS; a real relay keeps the default (TLS required).
    SMTP_REQUIRE_TLS: 'false',
    SMTP_FROM: process.env.SMTP_FROM || 'invoices@gateway.localhost',
  };

  const seed = await seedDemo(env);

  const sup = services.createSupervisor();
  const api = sup.spawn('api', process.execPath, [path.join(ROOT, 'dist/src/main/api.js')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const worker = sup.spawn('worker', process.execPath, [path.join(ROOT, 'dist/src/main/worker.js')], {
    cwd: ROOT,
    env: { ...env, TEMPORAL_WORKFLOW_BUNDLE: WORKFLOW_BUNDLE },
    stdio: ['ignore', 'inherit', 'inherit'],
  });

  // Ends on the first signal or the first child that exits on its own.
  let reason;
  const finished = new Promise((resolve) => {
    const onSignal = (sig) => {
      reason = reason || { sig };
      resolve();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    for (const m of [api, worker]) {
      m.exitPromise.then(() => {
        reason = reason || { child: m };
        resolve();
      });
    }
  });

  const apiReady = services
    .waitForPort('127.0.0.1', Number(port), API_READY_TIMEOUT_MS, () => (api.exited ? 'api exited' : undefined))
    .then(
      () => true,
      () => false,
    );
  if (await Promise.race([apiReady, finished.then(() => false)])) {
    const base = `http://127.0.0.1:${port}`;
    const lines = [
      '',
      `Invoice Gateway is up (${Math.round((Date.now() - t0) / 1000)}s)`,
      `  API          ${base}`,
      `  API docs     ${base}/docs`,
      `  Temporal UI  ${svc.temporalUiUrl}`,
      `  Temporal     ${svc.temporalAddress}`,
      `  MongoDB      ${svc.mongodbUri}`,
      `  Mail (SMTP)  ${mail.host}:${mail.port}, received mails in ${mailDir}`,
      `  State, logs  ${VAR_DIR}`,
    ];
    if (seed) {
      lines.push('  Demo tenant');
      for (const k of ['tenantId', 'partyId', 'clientId', 'clientSecret']) {
        if (seed[k] !== undefined) lines.push(`    ${k.padEnd(13)}${seed[k]}`);
      }
    }
    lines.push('Ctrl-C stops everything.', '');
    process.stderr.write(`${lines.join('\n')}\n`);
  } else if (!reason) {
    say(`API did not listen on port ${port} within ${API_READY_TIMEOUT_MS / 1000}s; still waiting for it`);
  }

  await finished;
  let code = 0;
  if (reason.child) {
    const m = reason.child;
    say(`${m.name} exited (${m.exitSignal || `code ${m.exitCode}`}); stopping the rest`);
    code = 1;
  } else {
    say(`${reason.sig}: stopping`);
  }
  // The API drains first, then the worker, then the servers they depend on.
  await sup.stopAll([api, worker]);
  await svc.stop();
  await mail.close();
  say('stopped');
  return code;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    say(`failed: ${err && err.message ? err.message : err}`);
    process.exit(1);
  },
);
