'use strict';
// Runs the real gateway for a benchmark: the compiled API and worker as separate processes against the local servers,
// a tenant, party and client created with the admin CLI, and a token from the real token endpoint.

const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const services = require('../../scripts/lib/services');

const ROOT = services.REPO_ROOT;
const HOST = '127.0.0.1';
const API_JS = path.join(ROOT, 'dist', 'src', 'main', 'api.js');
const WORKER_JS = path.join(ROOT, 'dist', 'src', 'main', 'worker.js');
const ADMIN_JS = path.join(ROOT, 'dist', 'src', 'main', 'admin.js');
const PROFILE_HOOK = path.join(__dirname, 'profile-hook.js');
const STALL_HOOK = path.join(__dirname, 'stall-hook.js');

const API_READY_TIMEOUT_MS = 60_000;
// The worker bundles the workflow code with webpack at start; on 2 busy cores that takes a while.
const WORKER_READY_TIMEOUT_MS = 120_000;
const ADMIN_TIMEOUT_MS = 60_000;
const HTTP_TIMEOUT_MS = 30_000;
const PROFILE_WRITE_TIMEOUT_MS = 60_000;
// The processes are disposable: a short grace keeps the run bounded when open requests wait on a busy database.
const STOP_GRACE_MS = 10_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Latin letters only, as FerretDB wants for database names. */
function randomLetters(n) {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz';
  const bytes = crypto.randomBytes(n);
  let s = '';
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return s;
}

function tail(file, lines = 40) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** One HTTP request with a bounded wait; resolves { status, headers, body }. */
function request(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: HTTP_TIMEOUT_MS }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out after ${HTTP_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** An autocannon request that uploads `body` as a sales invoice, each time under a new X-Service-DocumentId. */
function uploadRequest({ partyId, token, body }) {
  return {
    method: 'POST',
    path: `/api/v1/${partyId}/salesInvoice/send`,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/xml' },
    body,
    // A repeated id would be answered 409 without storing anything.
    setupRequest: (req) => {
      req.headers = { ...req.headers, 'X-Service-DocumentId': crypto.randomUUID() };
      return req;
    },
  };
}

function tokenForm({ clientId, clientSecret }) {
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
    scope: 'ap',
  }).toString();
}

/**
 * Starts the gateway processes. `env` adds to (and overrides) the benchmark defaults; `worker: false` runs the API
 * alone; with `cpuProfileDir` both processes load bench/lib/profile-hook.js, and startProfiles()/stopProfiles(tag)
 * profile the span between the two calls; with `stallFile` both load bench/lib/stall-hook.js and append their event-loop
 * stalls and long GC pauses to that file.
 */
async function startGateway({
  svc,
  logDir,
  env = {},
  worker = true,
  cpuProfileDir,
  stallFile,
  label = 'gateway',
  port: fixedPort,
}) {
  for (const f of [API_JS, WORKER_JS, ADMIN_JS]) {
    if (!fs.existsSync(f))
      throw new Error(`${path.relative(ROOT, f)} is missing; the build step should have produced it`);
  }
  // A caller that publishes the API's URL (PUBLIC_BASE_URL: our SMP and AS4 endpoint) picks the port first.
  const port = fixedPort ?? (await services.getFreePort(HOST));
  const metricsPort = await services.getFreePort(HOST);
  // A database and task queue of our own: nothing else's data or workers get mixed into the figures,
  // even when MONGODB_URI / TEMPORAL_ADDRESS point at shared servers.
  const dbName = `bench${randomLetters(10)}`;
  const taskQueue = `bench-${label}-${crypto.randomUUID()}`;
  const childEnv = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'info',
    HOST,
    PORT: String(port),
    MONGODB_URI: svc.mongodbUri,
    MONGODB_DB: dbName,
    TEMPORAL_ADDRESS: svc.temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    WORKER_METRICS_ADDRESS: `${HOST}:${metricsPort}`,
    DEMO_SEED: 'false',
    SUBSCRIPTION_KEYS: '',
    ...(stallFile ? { BENCH_STALL_FILE: stallFile } : {}),
    ...env,
  };
  if (!env.PUBLIC_BASE_URL) delete childEnv.PUBLIC_BASE_URL;
  delete childEnv.AUTH_BASE_URL;
  delete childEnv.AUTH_ISSUER;

  const sup = services.createSupervisor();
  const procs = [];
  const spawnLogged = (name, script) => {
    const logFile = path.join(logDir, `${label}-${name}.log`);
    const fd = fs.openSync(logFile, 'a');
    // Profiling adds its hook and an IPC channel to talk to it, the stall log its own hook (a 10 ms ticker and a GC
    // observer); otherwise the processes run exactly as deployed.
    const args = [
      ...(cpuProfileDir ? ['--require', PROFILE_HOOK] : []),
      ...(stallFile ? ['--require', STALL_HOOK] : []),
      script,
    ];
    const stdio = cpuProfileDir ? ['ignore', fd, fd, 'ipc'] : ['ignore', fd, fd];
    let managed;
    try {
      managed = sup.spawn(name, process.execPath, args, { cwd: ROOT, env: childEnv, stdio });
    } finally {
      fs.closeSync(fd);
    }
    managed.logFile = logFile;
    procs.push(managed);
    return managed;
  };
  /** Sends a profiler command over IPC and waits for the hook's answer. */
  const profilerCall = (m, msg, expect) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        m.child.off('message', onMessage);
        reject(
          new Error(`${m.name}: no answer to profiler ${msg.benchProfile} within ${PROFILE_WRITE_TIMEOUT_MS / 1000} s`),
        );
      }, PROFILE_WRITE_TIMEOUT_MS);
      const onMessage = (answer) => {
        if (!answer || typeof answer !== 'object' || !answer.benchProfile) return;
        clearTimeout(timer);
        m.child.off('message', onMessage);
        if (answer.benchProfile === expect) resolve(answer);
        else reject(new Error(`${m.name}: profiler ${msg.benchProfile} failed: ${answer.error}`));
      };
      m.child.on('message', onMessage);
      m.child.send(msg);
    });
  const exited = (m) =>
    m.exited
      ? `${m.name} exited (${m.exitSignal || `code ${m.exitCode}`}); last lines of ${m.logFile}:\n${tail(m.logFile)}`
      : undefined;

  const url = `http://${HOST}:${port}`;
  const stop = async () => {
    await Promise.all(procs.map((m) => sup.stopChild(m, STOP_GRACE_MS)));
    sup.close();
  };

  const startProfiles = async () => {
    if (!cpuProfileDir) return;
    await Promise.all(procs.filter((m) => !m.exited).map((m) => profilerCall(m, { benchProfile: 'start' }, 'started')));
  };
  /** Stops profiling; returns the files written, <label>-<tag>-<process>.cpuprofile in the profile directory. */
  const stopProfiles = async (tag) => {
    if (!cpuProfileDir) return [];
    const live = procs.filter((m) => !m.exited);
    return Promise.all(
      live.map(async (m) => {
        const file = path.join(cpuProfileDir, `${label}-${tag}-${m.name}.cpuprofile`);
        await profilerCall(m, { benchProfile: 'stop', file }, 'written');
        return { process: m.name, file };
      }),
    );
  };

  try {
    if (cpuProfileDir) fs.mkdirSync(cpuProfileDir, { recursive: true });
    const api = spawnLogged('api', API_JS);
    const wk = worker ? spawnLogged('worker', WORKER_JS) : undefined;

    await waitFor(`API /readyz at ${url}`, API_READY_TIMEOUT_MS, async () => {
      const why = exited(api);
      if (why) throw new Error(why);
      try {
        const res = await request(`${url}/readyz`);
        return res.status === 200;
      } catch {
        return false;
      }
    });
    if (wk) {
      await waitFor('worker start', WORKER_READY_TIMEOUT_MS, async () => {
        const why = exited(wk);
        if (why) throw new Error(why);
        return /worker running/.test(fs.readFileSync(wk.logFile, 'utf8'));
      });
    }
    return {
      url,
      port,
      env: childEnv,
      dbName,
      taskQueue,
      api,
      worker: wk,
      /** Problems seen after start: a process that died while the load ran. */
      crashed: () => procs.map(exited).filter(Boolean),
      startProfiles,
      stopProfiles,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitFor(what, timeoutMs, check) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(200);
  }
}

/** Runs one admin CLI command with --json against the gateway's database and returns the parsed result. */
function admin(gw, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ADMIN_JS, ...args, '--json'], {
      cwd: ROOT,
      env: gw.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), ADMIN_TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const cmd = `admin ${args.filter((a) => !/secret|password/i.test(a)).join(' ')}`;
      if (code !== 0)
        return reject(new Error(`${cmd} failed (${signal || `exit ${code}`}): ${err.trim() || out.trim()}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`${cmd} printed no JSON: ${out.trim().slice(0, 300)}`));
      }
    });
  });
}

/** A tenant, one party in it and a client granted that tenant, all through the admin CLI. */
async function seedTenant(gw, { partyId = '0106:12345678', country = 'NL' } = {}) {
  const tenant = await admin(gw, ['tenant', 'create', '--name', 'Benchmark tenant']);
  const tenantId = tenant._id ?? tenant.id;
  if (!tenantId) throw new Error(`tenant create returned no id: ${JSON.stringify(tenant)}`);
  await admin(gw, [
    'party',
    'create',
    '--tenant',
    tenantId,
    '--party-id',
    partyId,
    '--country',
    country,
    '--name',
    'Benchmark supplier',
  ]);
  const client = await admin(gw, ['client', 'create', '--name', 'benchmark', '--tenant', tenantId]);
  if (!client.clientId || !client.clientSecret) throw new Error('client create printed no clientId/clientSecret');
  return { tenantId, partyId, clientId: client.clientId, clientSecret: client.clientSecret };
}

async function fetchToken(gw, credentials) {
  const res = await request(`${gw.url}/connect/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: tokenForm(credentials),
  });
  if (res.status !== 200) throw new Error(`POST /connect/token answered ${res.status}: ${res.body.slice(0, 300)}`);
  const token = JSON.parse(res.body).access_token;
  if (typeof token !== 'string') throw new Error('token response has no access_token');
  return token;
}

/**
 * A JSON request to the API over a keep-alive agent. A request that fails with a reset on a reused socket is sent
 * once more: the server closed that idle keep-alive socket as the request went out, so it never read it (the retry
 * Node's http documentation gives for this race).
 */
async function apiCall(agent, url, opts) {
  // A kept-alive socket the server closed as the request went out fails with a reset; Node's documentation advises
  // sending again. The next pooled socket may have been closed the same way, so a few times.
  for (let tries = 1; ; tries++) {
    try {
      return await apiRequest(agent, url, opts);
    } catch (e) {
      if (tries >= 4 || !e.reusedSocket || !(e.code === 'ECONNRESET' || /socket hang up/.test(e.message))) throw e;
    }
  }
}

function apiRequest(agent, url, { method, token, body }) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(
      url,
      {
        method,
        agent,
        timeout: HTTP_TIMEOUT_MS,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(data ? { 'Content-Type': 'application/json', 'Content-Length': data.length } : {}),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode < 200 || res.statusCode > 299)
            return reject(new Error(`${method} ${url} answered ${res.statusCode}: ${text.slice(0, 300)}`));
          resolve(text ? JSON.parse(text) : undefined);
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', (e) => {
      e.reusedSocket = req.reusedSocket;
      reject(e);
    });
    req.end(data);
  });
}

/** Runs fn(db) on a database through the driver the gateway uses; resolves undefined when it is not installed. */
async function withDatabase(uri, dbName, fn) {
  let driver;
  try {
    driver = require(require.resolve('mongodb', { paths: [ROOT] }));
  } catch {
    return undefined;
  }
  const client = new driver.MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.connect();
    return await fn(client.db(dbName));
  } finally {
    await client.close().catch(() => {});
  }
}

/** Drops the benchmark database, for runs against servers that outlive the benchmark (MONGODB_URI set). */
async function dropDatabase(uri, dbName) {
  return (await withDatabase(uri, dbName, (db) => db.dropDatabase().then(() => true))) ?? false;
}

module.exports = {
  HOST,
  startGateway,
  admin,
  seedTenant,
  fetchToken,
  tokenForm,
  uploadRequest,
  request,
  apiCall,
  dropDatabase,
  withDatabase,
  randomLetters,
};
