#!/usr/bin/env node
'use strict';
// `npm start`: build, fetch the official rule packs when missing, start Temporal (with its UI) and the database with
// state kept under var/, a local SMTP sink (mails kept under var/mail), and the demo's Peppol network on loopback: the
// test PKI (var/pki) as our AP and SMP keys, a local SML zone (var/sml-zone.json, served by a DNS server of ours);
// seed the demo tenant, then run the API, the worker and taxsim (the reference tax authority) until Ctrl-C.
// scripts/lib/demo.js says how the parts fit.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const services = require('./lib/services');
const { startSmtpSink } = require('./lib/smtp-sink');
const { startLocalSml } = require('./lib/local-sml');
const { DEMO_SML_ZONE, demoCommands, demoPeppolEnv, demoTaxReportingConfig, demoTaxsimEnv } = require('./lib/demo');
const { fetchRules } = require('./rules/fetch');

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

/**
 * The official rule packs validation needs (transforms/rules-manifest.json), fetched and compiled into the cache on
 * the first start (Maven Central; progress on stderr as `[rules]`); later starts find them in place in a moment.
 * A failure is reported and the gateway starts anyway: invoices then end in InvoiceSentError naming the missing pack.
 */
async function ensureRulePacks() {
  try {
    await fetchRules();
    return true;
  } catch (e) {
    say(`the rule packs could not be fetched (${e.message}); run \`npm run rules:fetch\` to see why`);
    return false;
  }
}

/** The test PKI of the demo's access point and SMP, made once under var/pki (renewed when near expiry). */
async function ensureDemoPki() {
  // Compiled from src/ by the build above; the same code makes the tests' PKI.
  const { ensureTestPki, ensureExtraApCertificate } = require(path.join(ROOT, 'dist/src/peppol/pki/test-pki.js'));
  const { TAXSIM_SEAT_ID } = require(path.join(ROOT, 'dist/src/taxsim/index.js'));
  const { dir, created } = await ensureTestPki(path.join(VAR_DIR, 'pki'));
  if (created) say(`generated the demo PKI (test CA, AP and SMP keys) in ${dir}`);
  // taxsim's own access point key, of the same AP CA.
  const taxsim = await ensureExtraApCertificate(dir, 'taxsim', TAXSIM_SEAT_ID);
  if (taxsim.created) say(`issued the demo tax authority's AP certificate (${TAXSIM_SEAT_ID}) in ${taxsim.p12}`);
  return dir;
}

/** Runs the seed command and returns its JSON; any failure is reported and yields undefined. */
function seedDemo(env, smlZoneFile) {
  return new Promise((resolve) => {
    const admin = path.join(ROOT, 'dist/src/main/admin.js');
    const child = spawn(process.execPath, [admin, 'seed-demo', '--sml-zone-file', smlZoneFile, '--json'], {
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

/** Writes var/tax-reporting.json for the countries taxsim serves by default; returns its path. */
function writeDemoTaxReportingConfig() {
  const { defaultTaxsimParticipants, TAXSIM_SEAT_ID } = require(path.join(ROOT, 'dist/src/taxsim/index.js'));
  const { spidOfSeatId } = require(path.join(ROOT, 'dist/src/peppol/identifiers.js'));
  const { TEST_SENDER_SEAT_ID } = require(path.join(ROOT, 'dist/src/peppol/pki/test-pki.js'));
  const file = path.join(VAR_DIR, 'tax-reporting.json');
  const config = demoTaxReportingConfig({
    spid: spidOfSeatId(TEST_SENDER_SEAT_ID).value.replace(/^0242:/, ''),
    participants: defaultTaxsimParticipants(spidOfSeatId(TAXSIM_SEAT_ID)),
  });
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  return file;
}

async function main() {
  const t0 = Date.now();
  say('building (tsc -p tsconfig.build.json)');
  const buildCode = await build();
  if (buildCode !== 0) {
    say('build failed');
    return buildCode;
  }

  fs.mkdirSync(VAR_DIR, { recursive: true });
  const pkiDir = await ensureDemoPki();
  // Fetching rule packs mostly waits on the network and the servers mostly wait to start: side by side.
  const [rulesReady, svc] = await Promise.all([
    ensureRulePacks(),
    services
      .ensureTools()
      .then(() => services.startServices({ persistentDir: VAR_DIR, ui: true, handleSignals: false })),
  ]);
  // The demo's mailbox: what the e-mail channel sends lands here as .eml files (open them in any mail client).
  const mailDir = path.join(VAR_DIR, 'mail');
  const mail = await startSmtpSink({ dir: mailDir });
  // The demo's SML: the seed registers the demo parties in this zone file, our DNS server answers from it.
  const smlZoneFile = path.join(VAR_DIR, 'sml-zone.json');
  const sml = await startLocalSml({ zoneFile: smlZoneFile });
  const port = process.env.PORT || '8080';
  const base = `http://127.0.0.1:${port}`;
  const taxsimPort = Number(process.env.TAXSIM_PORT || services.TAXSIM_DEFAULT_PORT);
  const taxsimUrl = process.env.TAXSIM_URL || `http://127.0.0.1:${taxsimPort}`;
  const env = {
    ...process.env,
    TAXSIM_URL: taxsimUrl,
    ...demoPeppolEnv({ pkiDir, dnsAddress: sml.address, publicBaseUrl: process.env.PUBLIC_BASE_URL || base }),
    TEMPORAL_ADDRESS: svc.temporalAddress,
    MONGODB_URI: svc.mongodbUri,
    PORT: port,
    SMTP_HOST: mail.host,
    SMTP_PORT: String(mail.port),
    // The sink is on loopback and offers no STARTTLS; a real relay keeps the default (TLS required).
    SMTP_REQUIRE_TLS: 'false',
    SMTP_FROM: process.env.SMTP_FROM || 'invoices@gateway.localhost',
  };

  const seed = await seedDemo(env, smlZoneFile);

  const sup = services.createSupervisor();
  // After the seed: both write the SML zone file. A failure is reported and the gateway starts anyway.
  const taxsim = await services
    .startTaxsimService({
      sup,
      port: taxsimPort,
      logDir: svc.logDir,
      env: { ...env, ...demoTaxsimEnv({ pkiDir, smlZoneFile }) },
    })
    .catch((e) => {
      say(`taxsim (the reference tax authority) did not start: ${e.message}`);
      return undefined;
    });
  // With taxsim up, the worker reports the demo's invoices to it (C2 for the sender's, C3 for the receiver's), and
  // the API takes requests for later reports (POST …/taxReport).
  const taxReporting = taxsim ? { TAX_REPORTING_CONFIG: writeDemoTaxReportingConfig() } : {};
  const api = sup.spawn('api', process.execPath, [path.join(ROOT, 'dist/src/main/api.js')], {
    cwd: ROOT,
    env: { ...env, ...taxReporting },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const worker = sup.spawn('worker', process.execPath, [path.join(ROOT, 'dist/src/main/worker.js')], {
    cwd: ROOT,
    env: { ...env, ...taxReporting, TEMPORAL_WORKFLOW_BUNDLE: WORKFLOW_BUNDLE },
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
    const lines = [
      '',
      `Invoice Gateway is up (${Math.round((Date.now() - t0) / 1000)}s)`,
      `  API          ${base}`,
      `  API docs     ${base}/docs`,
      `  Temporal UI  ${svc.temporalUiUrl}`,
      `  Temporal     ${svc.temporalAddress}`,
      `  MongoDB      ${svc.mongodbUri}`,
      `  Mail (SMTP)  ${mail.host}:${mail.port}; every mail sent lands in ${path.join(mailDir, '*.eml')}`,
      `  Peppol       AS4 ${base}/as4, our SMP ${base}/smp, SML zone ${DEMO_SML_ZONE} on DNS ${sml.address}`,
      taxsim
        ? `  Tax authority taxsim ${taxsim.url} (reports received; AS4 ${taxsim.url}/as4, SMP ${taxsim.url}/smp)`
        : '  Tax authority taxsim did not start (see above)',
      `  State, logs  ${VAR_DIR}`,
    ];
    if (!rulesReady) lines.push('  Rule packs   missing: invoices end in InvoiceSentError until `npm run rules:fetch`');
    if (seed) {
      lines.push(
        '  Demo tenant',
        `    tenantId     ${seed.tenantId}`,
        `    clientId     ${seed.clientId}`,
        `    clientSecret ${seed.clientSecret}`,
        `    sender       ${seed.partyId} (mail hook ${seed.mailHookId})`,
        `    receiver     ${seed.receiverPartyId}`,
        '  Send the demo invoice from the sender to the receiver over Peppol (AS4 on loopback) and follow it:',
        ...demoCommands({ base, seed, cwd: process.cwd() }).map((l) => `    ${l}`),
      );
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
  await sup.stopAll([api, worker, ...(taxsim && taxsim.managed ? [taxsim.managed] : [])]);
  await svc.stop();
  await mail.close();
  await sml.close();
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
