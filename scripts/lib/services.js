'use strict';
// Local servers for development and tests: a Temporal dev server and a MongoDB-wire database.
// Nothing here needs a container engine or a download at run time beyond the Go module proxy:
// the Temporal CLI and the FerretDB wrapper are built from source once into a cache outside the repo.

const { spawn, execFile } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const postgres = require('./postgres');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const FERRETDB_SRC_DIR = path.join(REPO_ROOT, 'tools', 'ferretdb');
const FERRETDB_SRC_FILES = ['main.go', 'go.mod', 'go.sum'];
const FERRETDB_BIN = 'ferretdb-embed';

const TEMPORAL_CLI_VERSION = '1.5.1';
const TEMPORAL_CLI_MODULE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;
// v1.5.1 needs go >= 1.25; this toolchain is fetched through the Go proxy when the local go cannot build it.
const FALLBACK_GO_TOOLCHAIN = 'go1.25.5';

// FerretDB accepts database names of Latin letters only, so one name works on both backends.
const DB_NAME = 'invoicegateway';
const HOST = '127.0.0.1';
// The gateway's search attributes (workflows/contracts/search-attributes.ts; deliveries add HookId, EventTopic and
// DeliveryAttempt, workflows/contracts/deliver-webhook.ts). docker-compose.temporal.yml and docs/operations.md list
// the same; a unit test holds the three to the code's list.
const SEARCH_ATTRIBUTES = [
  'TenantId=Keyword',
  'DocumentId=Keyword',
  'PartyId=Keyword',
  'DocumentKind=Keyword',
  'DocumentState=Keyword',
  'Outcome=Keyword',
  'Channel=Keyword',
  'Attempt=Int',
  'NextAttemptOn=Datetime',
  'HookId=Keyword',
  'EventTopic=Keyword',
  'DeliveryAttempt=Int',
];

const TEMPORAL_READY_TIMEOUT_MS = 60_000;
const DB_READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;

function log(msg) {
  process.stderr.write(`[services] ${msg}\n`);
}

function formatMs(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Pure helpers

function cacheDir(env = process.env) {
  return env.INVOICE_GATEWAY_CACHE || path.join(os.homedir(), '.cache', 'invoice-gateway');
}

function binDir(env = process.env) {
  return path.join(cacheDir(env), 'bin');
}

/** Keeps Latin letters only; FerretDB rejects anything else in a database name. */
function lettersOnly(s) {
  return String(s).replace(/[^A-Za-z]/g, '');
}

function buildMongoUri(host, port, dbName = DB_NAME) {
  const name = lettersOnly(dbName);
  if (!name) throw new Error(`database name "${dbName}" has no letters`);
  return `mongodb://${host}:${port}/${name}`;
}

/** sha256 over each file's name and content, in the given order, so renames count as changes. */
function hashFiles(files) {
  const h = crypto.createHash('sha256');
  for (const file of files) {
    h.update(path.basename(file));
    h.update('\0');
    h.update(fs.readFileSync(file));
    h.update('\0');
  }
  return h.digest('hex');
}

function ferretdbSourceHash(srcDir = FERRETDB_SRC_DIR) {
  return hashFiles(FERRETDB_SRC_FILES.map((f) => path.join(srcDir, f)));
}

function stampPath(binary) {
  return `${binary}.sha256`;
}

/** True when the binary exists and its stamp matches the current source hash. */
function isStampCurrent(binary, hash) {
  try {
    fs.accessSync(binary, fs.constants.X_OK);
    return fs.readFileSync(stampPath(binary), 'utf8').trim() === hash;
  } catch {
    return false;
  }
}

function temporalServerArgs({ port, uiPort, ui = false, dbFile, ip = HOST, metricsPort }) {
  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(port),
    '--namespace',
    'default',
    '--log-level',
    'warn',
  ];
  for (const sa of SEARCH_ATTRIBUTES) args.push('--search-attribute', sa);
  args.push('--dynamic-config-value', 'frontend.enableServerVersionCheck=false');
  if (dbFile) {
    args.push('--db-filename', dbFile, '--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=NORMAL');
  }
  if (ui) args.push('--ui-port', String(uiPort));
  else args.push('--headless');
  if (metricsPort) args.push('--metrics-port', String(metricsPort));
  return args;
}

/** Environment for Temporal CLI children: no stray TEMPORAL_* settings (the CLI reads them), no phoning home. */
function temporalChildEnv(env = process.env) {
  const out = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('TEMPORAL_')) out[k] = v;
  out.TEMPORAL_VERSION_CHECK_DISABLED = '1';
  return out;
}

// The dev server's Go heap goal. Its live heap is mostly its caches (130-180 MB under load here); at Go's default
// (GOGC=100) the collector ran 11-17 times per 45 s of webhook load and took CPU from every other delivery.
// Collecting at five times the live heap, under a soft limit, cuts that to 2-4 times for about 0.4 GiB more memory
// (docs/decisions.md, "The Temporal server's garbage collector"; docs/benchmarks.md, runs 24-29).
const TEMPORAL_GO_GC = { GOGC: '400', GOMEMLIMIT: '2GiB' };

/** Environment for the dev server itself: as for the CLI, plus its Go collector settings unless the caller set them. */
function temporalServerEnv(env = process.env) {
  const out = temporalChildEnv(env);
  for (const [k, v] of Object.entries(TEMPORAL_GO_GC)) if (!env[k]) out[k] = v;
  return out;
}

function findOnPath(name, env = process.env) {
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Splits "host:port"; returns undefined for anything else. */
function parseHostPort(address) {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(String(address).trim());
  return m ? { host: m[1], port: Number(m[2]) } : undefined;
}

// ---------------------------------------------------------------------------------------------
// Ports

function getFreePort(host = HOST) {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/** Polls until the port accepts TCP or the deadline passes; `abort()` returning a string stops early. */
async function waitForPort(host, port, timeoutMs, abort = () => undefined) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const why = abort();
    if (why) throw new Error(why);
    if (await canConnect(host, port)) return;
    await sleep(100);
  }
  throw new Error(`${host}:${port} did not accept connections within ${formatMs(timeoutMs)}`);
}

// ---------------------------------------------------------------------------------------------
// Building tools

function findGo(env = process.env) {
  return findOnPath('go', env) || ['/usr/local/go/bin/go', '/usr/lib/go/bin/go'].find(isExecutable);
}

/**
 * Runs a go command with its output summarised on stderr: "go: downloading" lines pass through,
 * compiled package names (from -v) become a periodic progress line, and the tail is kept for errors.
 */
function runGo(goBin, args, { cwd, env, label }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const tail = [];
    let packages = 0;
    let buf = '';
    const child = spawn(goBin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onLine = (line) => {
      if (!line) return;
      tail.push(line);
      if (tail.length > 60) tail.shift();
      if (line.startsWith('go: downloading') || line.startsWith('go: finding')) {
        // Downloads are shown as they come; on a cold cache they are the slow part.
        process.stderr.write(`  ${line}\n`);
      } else if (/^[\w.\-/]+$/.test(line)) {
        packages += 1;
      } else {
        process.stderr.write(`  ${line}\n`);
      }
    };
    const onData = (chunk) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    const timer = setInterval(() => {
      log(`${label}: ${packages} packages compiled, ${formatMs(Date.now() - started)} elapsed`);
    }, 15_000);
    child.on('error', (err) => {
      clearInterval(timer);
      resolve({ ok: false, code: null, tail: [...tail, String(err)], ms: Date.now() - started });
    });
    child.on('close', (code) => {
      clearInterval(timer);
      if (buf) onLine(buf);
      resolve({ ok: code === 0, code, tail, ms: Date.now() - started });
    });
  });
}

function goEnv(extra) {
  const env = { ...process.env, CGO_ENABLED: '0', ...extra };
  // Keep the user's GOFLAGS (set in the environment) and add -trimpath for reproducible paths.
  env.GOFLAGS = `${process.env.GOFLAGS || ''} -trimpath`.trim();
  return env;
}

function findTemporalCli(env = process.env) {
  if (env.TEMPORAL_CLI_PATH) {
    if (!isExecutable(env.TEMPORAL_CLI_PATH)) {
      throw new Error(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not an executable file`);
    }
    return env.TEMPORAL_CLI_PATH;
  }
  const onPath = findOnPath('temporal', env);
  if (onPath) return onPath;
  const cached = path.join(binDir(env), 'temporal');
  return isExecutable(cached) ? cached : undefined;
}

async function ensureTemporalCli() {
  const found = findTemporalCli();
  if (found) return found;

  const bin = binDir();
  const target = path.join(bin, 'temporal');
  const goBin = findGo();
  const attempts = [];
  if (!goBin) {
    throw new Error(
      'Temporal CLI not found (checked TEMPORAL_CLI_PATH, `temporal` on PATH, ' +
        `${target}) and no Go toolchain to build it. Install Go >= 1.25, put a temporal ${TEMPORAL_CLI_VERSION} ` +
        'binary on PATH, or set TEMPORAL_ADDRESS to an existing server.',
    );
  }
  fs.mkdirSync(bin, { recursive: true });
  const ldflags = `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION}`;
  for (const toolchain of [undefined, FALLBACK_GO_TOOLCHAIN]) {
    // Build into a private dir and rename, so a concurrent run never sees a half-written binary.
    const tmpBin = fs.mkdtempSync(path.join(bin, '.build-'));
    const label = `temporal ${TEMPORAL_CLI_VERSION}${toolchain ? ` (GOTOOLCHAIN=${toolchain})` : ''}`;
    log(`building ${label} with ${goBin}; about 4 min on a cold cache`);
    const extra = { GOBIN: tmpBin };
    if (toolchain) extra.GOTOOLCHAIN = toolchain;
    const res = await runGo(goBin, ['install', '-v', '-ldflags', ldflags, TEMPORAL_CLI_MODULE], {
      cwd: os.tmpdir(),
      env: goEnv(extra),
      label,
    });
    try {
      if (res.ok) {
        fs.renameSync(path.join(tmpBin, 'temporal'), target);
        log(`built ${target} in ${formatMs(res.ms)}`);
        return target;
      }
    } finally {
      fs.rmSync(tmpBin, { recursive: true, force: true });
    }
    attempts.push(
      `go install ${TEMPORAL_CLI_MODULE} ${toolchain ? `with GOTOOLCHAIN=${toolchain}` : `with ${goBin}`}: ` +
        `exit ${res.code}\n    ${res.tail.slice(-15).join('\n    ')}`,
    );
    log(`${label} failed (exit ${res.code})`);
  }
  throw new Error(
    `could not build the Temporal CLI. Tried:\n  ${attempts.join('\n  ')}\n` +
      'Alternatives: set TEMPORAL_CLI_PATH to a temporal binary, or TEMPORAL_ADDRESS to a running server.',
  );
}

async function ensureFerretdb() {
  const target = path.join(binDir(), FERRETDB_BIN);
  const hash = ferretdbSourceHash();
  if (isStampCurrent(target, hash)) return target;

  const goBin = findGo();
  if (!goBin) {
    throw new Error(
      'no MongoDB available: MONGODB_URI is unset, mongod is not on PATH, and there is no Go toolchain ' +
        `to build the FerretDB wrapper in ${FERRETDB_SRC_DIR}. Install Go >= 1.24 or mongod, or set MONGODB_URI.`,
    );
  }
  fs.mkdirSync(binDir(), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  const attempts = [];
  for (const toolchain of [undefined, FALLBACK_GO_TOOLCHAIN]) {
    const label = `ferretdb-embed${toolchain ? ` (GOTOOLCHAIN=${toolchain})` : ''}`;
    log(`building ${label} from ${FERRETDB_SRC_DIR} with ${goBin}; about 2 min on a cold cache`);
    const res = await runGo(goBin, ['build', '-v', '-buildvcs=false', '-ldflags', '-s -w', '-o', tmp, '.'], {
      cwd: FERRETDB_SRC_DIR,
      env: goEnv(toolchain ? { GOTOOLCHAIN: toolchain } : {}),
      label,
    });
    if (res.ok) {
      // Binary first, stamp second: an interrupted build leaves a stale stamp, never a false one.
      fs.renameSync(tmp, target);
      fs.writeFileSync(stampPath(target), `${hash}\n`);
      log(`built ${target} in ${formatMs(res.ms)}`);
      return target;
    }
    fs.rmSync(tmp, { force: true });
    attempts.push(
      `go build in ${FERRETDB_SRC_DIR} ${toolchain ? `with GOTOOLCHAIN=${toolchain}` : `with ${goBin}`}: ` +
        `exit ${res.code}\n    ${res.tail.slice(-15).join('\n    ')}`,
    );
    log(`${label} failed (exit ${res.code})`);
  }
  throw new Error(
    `could not build the FerretDB wrapper. Tried:\n  ${attempts.join('\n  ')}\nAlternatives: put mongod on PATH, or ` +
      `set MONGODB_URI.`,
  );
}

/** FerretDB's storage when it is the database: LOCAL_DB_BACKEND, `sqlite` or `postgres` (docs/decisions.md). */
const LOCAL_DB_BACKENDS = ['sqlite', 'postgres'];
// PostgreSQL: measured better, and the whole suite ran green on it (docs/decisions.md, "FerretDB's backend").
const DEFAULT_LOCAL_DB_BACKEND = 'postgres';

function localDbBackend(env = process.env) {
  const v = (env.LOCAL_DB_BACKEND || DEFAULT_LOCAL_DB_BACKEND).trim().toLowerCase();
  if (!LOCAL_DB_BACKENDS.includes(v)) {
    throw new Error(`LOCAL_DB_BACKEND=${env.LOCAL_DB_BACKEND} is not one of ${LOCAL_DB_BACKENDS.join(', ')}`);
  }
  return v;
}

/** Which database server would be used, without building anything. */
function databasePlan(env = process.env) {
  if (env.MONGODB_URI) return { kind: 'env' };
  const mongod = findOnPath('mongod', env);
  if (mongod) return { kind: 'mongod', path: mongod };
  return { kind: 'ferretdb', backend: localDbBackend(env) };
}

/**
 * Builds whatever the current environment will need (nothing when TEMPORAL_ADDRESS and MONGODB_URI
 * are set). `all: true` builds both tools and installs PostgreSQL regardless.
 */
async function ensureTools({ all = false } = {}) {
  const out = {};
  if (all || !process.env.TEMPORAL_ADDRESS) out.temporalCli = await ensureTemporalCli();
  const plan = databasePlan();
  if (all || plan.kind === 'ferretdb') out.ferretdb = await ensureFerretdb();
  if ((all && postgres.postgresInstalled()) || plan.backend === 'postgres')
    out.postgresBin = postgres.ensurePostgres(log);
  if (plan.kind === 'mongod') out.mongod = plan.path;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Supervising children

// A detached watchdog holding a pipe from this process: when the pipe closes (this process exited,
// however it died, SIGKILL included) it terminates every registered process group. No prctl needed.
const REAPER_SRC = `
const groups = new Set();
let buf = '';
const alive = (g) => { try { process.kill(-g, 0); return true; } catch { return false; } };
const signal = (sig) => { for (const g of groups) { try { process.kill(-g, sig); } catch {} } };
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\\n')) >= 0) {
    const [op, id] = buf.slice(0, i).split(' ');
    buf = buf.slice(i + 1);
    if (op === '+') groups.add(Number(id)); else if (op === '-') groups.delete(Number(id));
  }
});
process.stdin.on('end', () => {
  signal('SIGTERM');
  const deadline = Date.now() + 8000;
  const tick = () => {
    for (const g of groups) if (!alive(g)) groups.delete(g);
    if (groups.size === 0) process.exit(0);
    if (Date.now() > deadline) { signal('SIGKILL'); process.exit(0); }
    setTimeout(tick, 100);
  };
  tick();
});
`;

class Supervisor {
  constructor() {
    this.children = new Set();
    this.reaper = undefined;
    this.onExit = () => {
      // Last chance on a normal exit: only synchronous calls work here.
      for (const c of this.children) {
        try {
          process.kill(-c.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    };
  }

  startReaper() {
    if (this.reaper) return;
    this.reaper = spawn(process.execPath, ['-e', REAPER_SRC], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    this.reaper.stdin.on('error', () => {});
    this.reaper.on('error', () => {});
    process.on('exit', this.onExit);
  }

  tellReaper(line) {
    if (this.reaper && this.reaper.stdin.writable) this.reaper.stdin.write(`${line}\n`);
  }

  /**
   * Spawns `cmd` as the leader of a new process group, so it and anything it starts can be
   * signalled together and a terminal's Ctrl-C reaches it only through us, in order.
   */
  spawn(name, cmd, args, opts = {}) {
    this.startReaper();
    const child = spawn(cmd, args, { ...opts, detached: true });
    const managed = {
      name,
      child,
      pid: child.pid,
      exited: false,
      exitCode: null,
      exitSignal: null,
      exitPromise: undefined,
    };
    managed.exitPromise = new Promise((resolve) => {
      const finish = (code, sig) => {
        if (managed.exited) return;
        managed.exited = true;
        managed.exitCode = code;
        managed.exitSignal = sig;
        this.children.delete(managed);
        if (managed.pid) this.tellReaper(`- ${managed.pid}`);
        resolve();
      };
      child.on('exit', finish);
      child.on('error', (err) => {
        managed.spawnError = err;
        finish(null, null);
      });
    });
    if (child.pid) {
      this.children.add(managed);
      this.tellReaper(`+ ${child.pid}`);
    }
    return managed;
  }

  /** SIGTERM to the child's group, SIGKILL after the grace period; resolves once it has exited. */
  async stopChild(managed, graceMs = STOP_GRACE_MS) {
    if (managed.exited || !managed.pid) return;
    const signal = (sig) => {
      try {
        process.kill(-managed.pid, sig);
      } catch {
        // group already gone
      }
    };
    signal('SIGTERM');
    let timer;
    const timedOut = await Promise.race([
      managed.exitPromise.then(() => false),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(true), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      log(`${managed.name} did not stop within ${formatMs(graceMs)}; killing it`);
      signal('SIGKILL');
      await managed.exitPromise;
    }
  }

  /** Stops the given children in order (all remaining ones when omitted), then the watchdog. */
  async stopAll(order) {
    const list = order || [...this.children].reverse();
    for (const m of list) await this.stopChild(m);
    if (this.children.size === 0) this.close();
  }

  close() {
    process.removeListener('exit', this.onExit);
    if (this.reaper) {
      this.reaper.stdin.end();
      this.reaper.unref();
      this.reaper = undefined;
    }
  }
}

function createSupervisor() {
  return new Supervisor();
}

// ---------------------------------------------------------------------------------------------
// Starting servers

function tailFile(file, lines = 30) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function exitReason(managed, logFile) {
  if (!managed.exited) return undefined;
  if (managed.spawnError) return `${managed.name} could not be started: ${managed.spawnError.message}`;
  const how = managed.exitSignal ? `signal ${managed.exitSignal}` : `code ${managed.exitCode}`;
  return `${managed.name} exited early (${how}); last lines of ${logFile}:\n${tailFile(logFile)}`;
}

function execFileResult(cmd, args, opts) {
  return new Promise((resolve) => {
    execFile(cmd, args, opts, (err, stdout, stderr) => resolve({ ok: !err, err, stdout, stderr }));
  });
}

async function checkTemporalNamespace(cli, address) {
  return execFileResult(
    cli,
    [
      'operator',
      'namespace',
      'describe',
      '-n',
      'default',
      '--address',
      address,
      '--disable-config-file',
      '--disable-config-env',
      '--command-timeout',
      '5s',
      '-o',
      'json',
    ],
    { env: temporalChildEnv(), timeout: 10_000 },
  );
}

/**
 * Registers the gateway's search attributes the namespace lacks. The dev server registers `--search-attribute` only
 * when it creates its database: one kept from an earlier version (`var/temporal` of `npm start`) keeps that
 * version's list, and the worker refuses to start without the attributes added since.
 */
async function ensureTemporalSearchAttributes(cli, address) {
  const common = ['--address', address, '--disable-config-file', '--disable-config-env', '--command-timeout', '10s'];
  const missing = async () => {
    const listed = await execFileResult(cli, ['operator', 'search-attribute', 'list', ...common, '-o', 'json'], {
      env: temporalChildEnv(),
      timeout: 15_000,
    });
    if (!listed.ok)
      throw new Error(`listing the search attributes at ${address} failed: ${listed.stderr || listed.err}`);
    const known = Object.keys(JSON.parse(listed.stdout).customAttributes ?? {});
    return SEARCH_ATTRIBUTES.map((sa) => sa.split('=')).filter(([name]) => !known.includes(name));
  };
  const absent = await missing();
  if (absent.length === 0) return;
  // One per call: the SQLite dev server registers only the first of several names given at once.
  for (const [name, type] of absent) {
    const args = ['operator', 'search-attribute', 'create', '--name', name, '--type', type, ...common];
    const created = await execFileResult(cli, args, { env: temporalChildEnv(), timeout: 15_000 });
    if (!created.ok)
      throw new Error(`registering the search attribute ${name} failed: ${created.stderr || created.err}`);
  }
  const still = await missing();
  if (still.length > 0)
    throw new Error(
      `Temporal at ${address} did not register the search attributes ${still.map(([n]) => n).join(', ')}`,
    );
  log(`registered the search attributes ${absent.map(([n]) => n).join(', ')} in the kept Temporal database`);
}

async function startTemporal(sup, { cli, port, uiPort, ui, dbFile, logDir, metricsPort }) {
  const logFile = path.join(logDir, 'temporal.log');
  const fd = fs.openSync(logFile, 'a');
  const started = Date.now();
  let managed;
  try {
    managed = sup.spawn('temporal', cli, temporalServerArgs({ port, uiPort, ui, dbFile, metricsPort }), {
      env: temporalServerEnv(),
      stdio: ['ignore', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  const address = `${HOST}:${port}`;
  try {
    await waitForPort(HOST, port, TEMPORAL_READY_TIMEOUT_MS, () => exitReason(managed, logFile));
    // An open port is not enough: the frontend answers before the namespace exists.
    const deadline = started + TEMPORAL_READY_TIMEOUT_MS;
    let last;
    for (;;) {
      const why = exitReason(managed, logFile);
      if (why) throw new Error(why);
      last = await checkTemporalNamespace(cli, address);
      if (last.ok) break;
      if (Date.now() > deadline) {
        throw new Error(
          `Temporal at ${address} not ready within ${formatMs(TEMPORAL_READY_TIMEOUT_MS)}: ` +
            `${(last.stderr || String(last.err)).trim()}\nlast lines of ${logFile}:\n${tailFile(logFile)}`,
        );
      }
      await sleep(250);
    }
    // A kept database may predate some of them (an in-memory one has them all).
    if (dbFile) await ensureTemporalSearchAttributes(cli, address);
  } catch (err) {
    await sup.stopChild(managed);
    throw err;
  }
  log(
    `Temporal dev server ready at ${address} in ${formatMs(Date.now() - started)} (${dbFile ? dbFile : 'in memory'}` +
      `; log ${logFile})`,
  );
  return {
    managed,
    address,
    uiUrl: ui ? `http://${HOST}:${uiPort}` : undefined,
    metricsUrl: metricsPort ? `http://${HOST}:${metricsPort}/metrics` : undefined,
    ms: Date.now() - started,
  };
}

function loadMongoDriver() {
  try {
    return require(require.resolve('mongodb', { paths: [REPO_ROOT] }));
  } catch {
    return undefined;
  }
}

/** A real round trip (ping) when the driver is installed; a TCP check otherwise. */
async function pingMongo(uri, timeoutMs) {
  const driver = loadMongoDriver();
  if (!driver) {
    const m = /^mongodb:\/\/(?:[^@/]*@)?([^,/]+)/.exec(uri);
    const hp = m && parseHostPort(m[1]);
    if (!hp) return { ok: true };
    return { ok: await canConnect(hp.host, hp.port, timeoutMs), err: new Error('TCP connect failed') };
  }
  const client = new driver.MongoClient(uri, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
  });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
    return { ok: true };
  } catch (err) {
    return { ok: false, err };
  } finally {
    await client.close().catch(() => {});
  }
}

async function waitForMongo(uri, managed, logFile, started) {
  const deadline = started + DB_READY_TIMEOUT_MS;
  let last;
  for (;;) {
    const why = exitReason(managed, logFile);
    if (why) throw new Error(why);
    last = await pingMongo(uri, 2000);
    if (last.ok) return;
    if (Date.now() > deadline) {
      throw new Error(
        `database at ${uri} not ready within ${formatMs(DB_READY_TIMEOUT_MS)}: ${last.err && last.err.message}`,
      );
    }
    await sleep(200);
  }
}

async function startFerretdb(sup, { bin, port, dataDir, postgresqlUrl, logDir }) {
  const logFile = path.join(logDir, 'ferretdb.log');
  const fd = fs.openSync(logFile, 'a');
  const logStream = fs.createWriteStream(logFile, { flags: 'a' });
  const started = Date.now();
  const args = ['--listen-addr', `${HOST}:${port}`];
  if (postgresqlUrl) args.push('--postgresql-url', postgresqlUrl);
  else if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    args.push('--data-dir', dataDir);
  }
  let managed;
  try {
    managed = sup.spawn('ferretdb', bin, args, { stdio: ['ignore', 'pipe', fd] });
  } finally {
    fs.closeSync(fd);
  }
  // The wrapper prints "ready mongodb://..." once listening; everything on stdout also goes to the log.
  let ready = false;
  let buf = '';
  if (managed.child.stdout) {
    managed.child.stdout.setEncoding('utf8').on('data', (d) => {
      logStream.write(d);
      if (ready) return;
      buf += d;
      if (/^ready mongodb:\/\//m.test(buf)) ready = true;
    });
    managed.child.stdout.on('close', () => logStream.end());
  }
  const uri = buildMongoUri(HOST, port);
  try {
    const deadline = started + DB_READY_TIMEOUT_MS;
    while (!ready) {
      const why = exitReason(managed, logFile);
      if (why) throw new Error(why);
      if (Date.now() > deadline)
        throw new Error(`FerretDB printed no ready line within ${formatMs(DB_READY_TIMEOUT_MS)}; log ${logFile}`);
      await sleep(50);
    }
    await waitForMongo(uri, managed, logFile, started);
  } catch (err) {
    await sup.stopChild(managed);
    throw err;
  }
  const where = postgresqlUrl ? 'PostgreSQL backend' : dataDir || 'in memory';
  log(`FerretDB ready at ${uri} in ${formatMs(Date.now() - started)} (${where}; log ${logFile})`);
  return { managed, uri, ms: Date.now() - started };
}

async function startMongod(sup, { bin, port, dataDir, logDir }) {
  const logFile = path.join(logDir, 'mongod.log');
  fs.mkdirSync(dataDir, { recursive: true });
  const fd = fs.openSync(logFile, 'a');
  const started = Date.now();
  let managed;
  try {
    managed = sup.spawn('mongod', bin, ['--dbpath', dataDir, '--bind_ip', HOST, '--port', String(port)], {
      stdio: ['ignore', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  const uri = buildMongoUri(HOST, port);
  try {
    await waitForPort(HOST, port, DB_READY_TIMEOUT_MS, () => exitReason(managed, logFile));
    await waitForMongo(uri, managed, logFile, started);
  } catch (err) {
    await sup.stopChild(managed);
    throw err;
  }
  log(`mongod ready at ${uri} in ${formatMs(Date.now() - started)} (${dataDir}; log ${logFile})`);
  return { managed, uri, ms: Date.now() - started };
}

/** The reference tax authority's entry point, built by `tsc` into dist/ (`npm run build`, `npm start`). */
const TAXSIM_ENTRY = path.join(REPO_ROOT, 'dist', 'src', 'main', 'taxsim.js');
const TAXSIM_DEFAULT_PORT = 8090;
const TAXSIM_READY_TIMEOUT_MS = 30_000;

/**
 * Starts taxsim, the local reference tax authority (src/taxsim), as a supervised process on `port` (default 8090),
 * or adopts the one TAXSIM_URL names. `env` is its whole environment: with PEPPOL_AP_* (its own AP key) and the
 * SML/SMP settings it is an AS4 access point, without them it serves the HTTP API only. Its log goes to
 * `<logDir>/taxsim.log`. Returns its URL.
 * @param {{ port?: number, env?: NodeJS.ProcessEnv, logDir: string, sup?: ReturnType<typeof createSupervisor> }} opts
 * @returns {Promise<{ url: string, managed?: object, provider: string }>}
 */
async function startTaxsimService(opts) {
  const adopted = process.env.TAXSIM_URL;
  if (adopted) {
    const u = new URL(adopted);
    if (!(await canConnect(u.hostname, Number(u.port || 80), 5000)))
      throw new Error(`TAXSIM_URL=${adopted} does not accept connections`);
    return { url: adopted.replace(/\/+$/, ''), provider: 'env' };
  }
  if (!fs.existsSync(TAXSIM_ENTRY)) throw new Error(`${TAXSIM_ENTRY} is missing: run \`npm run build\` first`);
  const sup = opts.sup || createSupervisor();
  const port = opts.port || TAXSIM_DEFAULT_PORT;
  const logFile = path.join(opts.logDir, 'taxsim.log');
  const fd = fs.openSync(logFile, 'a');
  const started = Date.now();
  let managed;
  try {
    managed = sup.spawn('taxsim', process.execPath, [TAXSIM_ENTRY], {
      cwd: REPO_ROOT,
      env: { ...(opts.env || process.env), TAXSIM_HOST: HOST, TAXSIM_PORT: String(port) },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  try {
    await waitForPort(HOST, port, TAXSIM_READY_TIMEOUT_MS, () => exitReason(managed, logFile));
  } catch (err) {
    await sup.stopChild(managed);
    throw err;
  }
  const url = `http://${HOST}:${port}`;
  log(`taxsim ready at ${url} in ${formatMs(Date.now() - started)} (log ${logFile})`);
  return { url, managed, provider: `taxsim ${TAXSIM_ENTRY}` };
}

/**
 * FerretDB on a private PostgreSQL cluster (scripts/lib/postgres.js): the cluster on a free port of its own, then
 * FerretDB connected to it through the cluster's socket directory. A throw-away cluster is removed at stop.
 */
async function startFerretdbOnPostgres(sup, { tools, port, persistent, logDir, onCluster }) {
  const cluster = postgres.prepareCluster({ cache: cacheDir(), persistentDir: persistent, log });
  onCluster(cluster);
  const pg = await postgres.startPostgres(sup, {
    cluster,
    port: await getFreePort(),
    logFile: path.join(logDir, 'postgres.log'),
    readyTimeoutMs: DB_READY_TIMEOUT_MS,
    exitReason,
    sleep,
  });
  log(`PostgreSQL ${postgres.PG_MAJOR} ready in ${formatMs(pg.ms)} (${cluster.dataDir}; log ${logDir}/postgres.log)`);
  try {
    const d = await startFerretdb(sup, { bin: tools.ferretdb, port, postgresqlUrl: pg.url, logDir });
    return { ...d, postgres: pg.managed };
  } catch (err) {
    await sup.stopChild(pg.managed);
    throw err;
  }
}

/** Starts with free ports; when a port was taken between picking and binding, tries again. */
async function withPortRetry(fixed, fn) {
  const attempts = fixed ? 1 : 3;
  let lastErr;
  for (let i = 0; i < attempts; i++) {
    try {
      return await fn();
    } catch (err) {
      lastErr = err;
      if (!/address already in use|bind/i.test(String(err && err.message))) throw err;
      log(`port clash, retrying: ${String(err.message).split('\n')[0]}`);
    }
  }
  throw lastErr;
}

/**
 * Starts (or adopts from the environment) a Temporal server and a MongoDB-wire database, and with `taxsim` the
 * reference tax authority (startTaxsimService; TAXSIM_URL adopts a running one).
 * @param {{ persistentDir?: string, ui?: boolean,
 *           ports?: { temporal?: number, temporalUi?: number, temporalMetrics?: number, mongodb?: number },
 *           handleSignals?: boolean, taxsim?: { port?: number, env?: NodeJS.ProcessEnv } }} [opts]
 * @returns {Promise<{ temporalAddress: string, temporalUiUrl?: string, temporalMetricsUrl?: string, mongodbUri: string,
 * taxsimUrl?: string, logDir: string, providers: { temporal: string, database: string, taxsim?: string },
 * timings: Record<string, number>, stop(): Promise<void> }>}
 */
async function startServices(opts = {}) {
  const { persistentDir, ui = false, ports = {}, handleSignals = true } = opts;
  const tools = await ensureTools();
  const sup = createSupervisor();
  const persistent = persistentDir ? path.resolve(persistentDir) : undefined;
  let logDir;
  let tempDir;
  if (persistent) {
    logDir = path.join(persistent, 'logs');
    fs.mkdirSync(logDir, { recursive: true });
  } else {
    tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoice-gateway-services-'));
    logDir = tempDir;
  }

  const started = [];
  const clusters = [];
  const onCluster = (c) => clusters.push(c);
  const timings = {};
  const providers = {};
  let stopping;
  let keepLogs = false;
  const stop = () => {
    if (!stopping) {
      stopping = (async () => {
        await sup.stopAll([...started].reverse());
        sup.close();
        for (const c of clusters) c.dispose();
        if (signalHandler) {
          process.removeListener('SIGINT', signalHandler);
          process.removeListener('SIGTERM', signalHandler);
        }
        if (tempDir) {
          const keep = (keepLogs || process.env.INVOICE_GATEWAY_KEEP_LOGS) && fs.readdirSync(tempDir).length > 0;
          if (!keep) fs.rmSync(tempDir, { recursive: true, force: true });
        }
      })();
    }
    return stopping;
  };
  let signalHandler;
  if (handleSignals) {
    signalHandler = (sig) => {
      log(`${sig}: stopping services`);
      stop().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
    };
    process.once('SIGINT', signalHandler);
    process.once('SIGTERM', signalHandler);
  }

  try {
    // Temporal
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    let temporalUiUrl;
    let temporalMetricsUrl;
    if (temporalAddress) {
      const hp = parseHostPort(temporalAddress);
      if (hp && !(await canConnect(hp.host, hp.port, 5000))) {
        throw new Error(`TEMPORAL_ADDRESS=${temporalAddress} does not accept connections`);
      }
      providers.temporal = 'env';
    } else {
      if (persistent) fs.mkdirSync(path.join(persistent, 'temporal'), { recursive: true });
      const t = await withPortRetry(Boolean(ports.temporal), async () =>
        startTemporal(sup, {
          cli: tools.temporalCli,
          port: ports.temporal || (await getFreePort()),
          uiPort: ui ? ports.temporalUi || (await getFreePort()) : undefined,
          ui,
          dbFile: persistent ? path.join(persistent, 'temporal', 'temporal.db') : undefined,
          logDir,
          metricsPort: ports.temporalMetrics,
        }),
      );
      started.push(t.managed);
      temporalAddress = t.address;
      temporalUiUrl = t.uiUrl;
      temporalMetricsUrl = t.metricsUrl;
      timings.temporalMs = t.ms;
      providers.temporal = `temporal CLI ${tools.temporalCli}`;
    }

    // Database
    let mongodbUri = process.env.MONGODB_URI;
    const plan = databasePlan();
    if (plan.kind === 'env') {
      const res = await pingMongo(mongodbUri, 5000);
      if (!res.ok) throw new Error(`MONGODB_URI=${mongodbUri} is not reachable: ${res.err && res.err.message}`);
      providers.database = 'env';
    } else {
      const fixed = Boolean(ports.mongodb);
      const d = await withPortRetry(fixed, async () => {
        const port = ports.mongodb || (await getFreePort());
        if (plan.kind === 'mongod') {
          const dataDir = persistent ? path.join(persistent, 'mongod') : path.join(tempDir, 'mongod');
          return startMongod(sup, { bin: plan.path, port, dataDir, logDir });
        }
        if (plan.backend === 'postgres')
          return startFerretdbOnPostgres(sup, { tools, port, persistent, logDir, onCluster });
        // Always file-backed: FerretDB 1.24's in-memory SQLite mode hangs on every update command.
        const dataDir = persistent ? path.join(persistent, 'ferretdb') : path.join(tempDir, 'ferretdb');
        return startFerretdb(sup, { bin: tools.ferretdb, port, dataDir, logDir });
      });
      if (d.postgres) started.push(d.postgres);
      started.push(d.managed);
      mongodbUri = d.uri;
      timings.databaseMs = d.ms;
      providers.database =
        plan.kind === 'mongod'
          ? `mongod ${plan.path}`
          : `FerretDB ${tools.ferretdb} (${plan.backend === 'postgres' ? 'PostgreSQL' : 'SQLite'} backend)`;
    }

    // The reference tax authority, when asked for (it needs the build in dist/).
    let taxsimUrl;
    if (opts.taxsim) {
      const t = await startTaxsimService({ ...opts.taxsim, logDir, sup });
      if (t.managed) started.push(t.managed);
      taxsimUrl = t.url;
      providers.taxsim = t.provider;
    }

    return {
      temporalAddress,
      temporalUiUrl,
      temporalMetricsUrl,
      mongodbUri,
      taxsimUrl,
      logDir,
      providers,
      timings,
      stop,
    };
  } catch (err) {
    // The logs explain the failure; leave them for a look.
    keepLogs = true;
    await stop();
    throw err;
  }
}

module.exports = {
  REPO_ROOT,
  SEARCH_ATTRIBUTES,
  DB_NAME,
  TEMPORAL_CLI_VERSION,
  FALLBACK_GO_TOOLCHAIN,
  FERRETDB_SRC_DIR,
  FERRETDB_SRC_FILES,
  cacheDir,
  binDir,
  lettersOnly,
  buildMongoUri,
  hashFiles,
  ferretdbSourceHash,
  stampPath,
  isStampCurrent,
  temporalServerArgs,
  ensureTemporalSearchAttributes,
  temporalChildEnv,
  temporalServerEnv,
  parseHostPort,
  findOnPath,
  findTemporalCli,
  databasePlan,
  localDbBackend,
  LOCAL_DB_BACKENDS,
  DEFAULT_LOCAL_DB_BACKEND,
  getFreePort,
  canConnect,
  waitForPort,
  ensureTemporalCli,
  ensureFerretdb,
  ensureTools,
  createSupervisor,
  startServices,
  startTaxsimService,
  TAXSIM_DEFAULT_PORT,
};
