'use strict';
// A private PostgreSQL 15 cluster for FerretDB's PostgreSQL backend (LOCAL_DB_BACKEND=postgres): the Debian package's
// binaries, a cluster directory of our own under the tool cache, its own port on 127.0.0.1 and its own socket
// directory, run in the foreground under our supervisor. Never the system service. PostgreSQL refuses to run as root,
// so a root caller runs initdb and the server as a dedicated system user (created when missing).

const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const PG_MAJOR = '15';
const PG_PACKAGE = `postgresql-${PG_MAJOR}`;
const PG_BIN_DIR = `/usr/lib/postgresql/${PG_MAJOR}/bin`;
/** The system user a root caller runs the cluster as. */
const PG_SYSTEM_USER = 'igw-postgres';
/** The superuser and database FerretDB uses inside the cluster. */
const PG_ROLE = 'ferretdb';
const PG_DATABASE = 'ferretdb';

function pgBinDir(env = process.env) {
  return env.PG_BIN_DIR || PG_BIN_DIR;
}

function pgBinary(name, env = process.env) {
  return path.join(pgBinDir(env), name);
}

function postgresInstalled(env = process.env) {
  return ['postgres', 'initdb'].every((b) => {
    try {
      fs.accessSync(pgBinary(b, env), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The PostgreSQL binaries, installed through scripts/system-deps.sh (apt, as root) when missing; an error naming the
 * package otherwise.
 */
function ensurePostgres(log = () => {}) {
  if (postgresInstalled()) return pgBinDir();
  const script = path.join(__dirname, '..', 'system-deps.sh');
  log(`${pgBinary('postgres')} missing: installing ${PG_PACKAGE} through ${script}`);
  // Its output goes to stderr: stdout may carry export lines (node scripts/services.js start).
  const res = spawnSync('bash', [script], { stdio: ['ignore', 2, 2] });
  if (res.status !== 0 || !postgresInstalled()) {
    throw new Error(
      `LOCAL_DB_BACKEND=postgres needs ${PG_PACKAGE} (${pgBinary('postgres')}): install it (as root: ` +
        `\`bash ${script}\`), set PG_BIN_DIR to its bin directory, or use LOCAL_DB_BACKEND=sqlite.`,
    );
  }
  return pgBinDir();
}

/** Who runs the server: this user, or the dedicated system user when this is root. */
function serverIdentity() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const lookup = () => spawnSync('id', ['-u', PG_SYSTEM_USER], { encoding: 'utf8' });
  let res = lookup();
  if (res.status !== 0) {
    const add = spawnSync(
      'useradd',
      [
        '--system',
        '--user-group',
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        '/usr/sbin/nologin',
      ].concat(PG_SYSTEM_USER),
      { encoding: 'utf8' },
    );
    res = lookup();
    if (res.status !== 0) {
      throw new Error(`could not create the system user ${PG_SYSTEM_USER}: ${(add.stderr || '').trim()}`);
    }
  }
  const uid = Number(res.stdout.trim());
  const gid = Number(spawnSync('id', ['-g', PG_SYSTEM_USER], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid, name: PG_SYSTEM_USER };
}

function canReach(dir, who) {
  if (!who) return true;
  return spawnSync('test', ['-w', dir, '-a', '-x', dir], { uid: who.uid, gid: who.gid }).status === 0;
}

/** A directory owned by the server user (created 0700), or an error when someone else owns it. */
function ownedDir(dir, who) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (who) {
    const st = fs.statSync(dir);
    if (st.uid !== who.uid && st.uid === 0) fs.chownSync(dir, who.uid, who.gid);
    else if (st.uid !== who.uid) throw new Error(`${dir} belongs to uid ${st.uid}, not ${who.name}`);
  }
  return dir;
}

/**
 * Where clusters live: `<cache>/postgres`, or, when the server user cannot reach the cache (root's home is 0700), a
 * directory of that user's own under the system's temp directory.
 */
function clusterRoot(cache, who) {
  const preferred = path.join(cache, 'postgres');
  ownedDir(preferred, who);
  if (canReach(preferred, who)) return preferred;
  return ownedDir(path.join(os.tmpdir(), `invoice-gateway-postgres-${who.name}`), who);
}

/** Throw-away clusters of runs that died without stopping (their process is gone). */
function removeAbandoned(root) {
  for (const name of fs.readdirSync(root)) {
    const m = /^run-(\d+)-/.exec(name);
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch (err) {
      if (err.code === 'ESRCH') fs.rmSync(path.join(root, name), { recursive: true, force: true });
    }
  }
}

function run(cmd, args, { who, cwd, env }) {
  const res = spawnSync(cmd, args, {
    cwd,
    env,
    encoding: 'utf8',
    uid: who && who.uid,
    gid: who && who.gid,
    timeout: 120_000,
  });
  if (res.status !== 0) {
    throw new Error(
      `${path.basename(cmd)} ${args.join(' ')} failed (${res.error || `exit ${res.status}`}):\n${res.stderr}`,
    );
  }
  return res.stdout;
}

function pgEnv() {
  // Only what the server needs; no PG* variables of the caller's leak in (they would redirect the client tools).
  return { PATH: process.env.PATH || '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'UTC' };
}

/**
 * A cluster directory. With `persistentDir` (npm start) it is kept: `<persistentDir>/postgres` when the server user can
 * reach it, else one per state directory under the cluster root. Otherwise it is a fresh one under the cluster root,
 * removed by `dispose()`. The first use runs initdb (local connections trusted inside a 0700 socket directory, TCP
 * connections need a generated password).
 */
function prepareCluster({ cache, persistentDir, log = () => {} }) {
  const who = serverIdentity();
  let dir;
  if (persistentDir) {
    const inState = path.join(persistentDir, 'postgres');
    if (canReach(ownedDir(inState, who), who)) dir = inState;
    else {
      const key = crypto.createHash('sha256').update(path.resolve(persistentDir)).digest('hex').slice(0, 12);
      dir = ownedDir(path.join(clusterRoot(cache, who), `kept-${key}`), who);
    }
  } else {
    const root = clusterRoot(cache, who);
    removeAbandoned(root);
    dir = ownedDir(path.join(root, `run-${process.pid}-${crypto.randomBytes(4).toString('hex')}`), who);
  }
  const dataDir = path.join(dir, 'data');
  const socketDir = ownedDir(path.join(dir, 'sock'), who);
  const pwFile = path.join(dir, 'password');
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.writeFileSync(pwFile, `${crypto.randomBytes(18).toString('base64url')}\n`, { mode: 0o600 });
    if (who) fs.chownSync(pwFile, who.uid, who.gid);
    const started = Date.now();
    run(
      pgBinary('initdb'),
      ['-D', dataDir, '-U', PG_ROLE, `--pwfile=${pwFile}`, '--auth-local=trust', '--auth-host=scram-sha-256'].concat(
        ['-E', 'UTF8', '--locale=C.UTF-8', '--no-instructions'],
        persistentDir ? [] : ['--no-sync'],
      ),
      { who, cwd: dir, env: pgEnv() },
    );
    log(`PostgreSQL cluster initialised in ${dataDir} (${Date.now() - started} ms)`);
  }
  return {
    who,
    dir,
    dataDir,
    socketDir,
    password: fs.readFileSync(pwFile, 'utf8').trim(),
    dispose() {
      if (!persistentDir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The server's arguments: everything on the command line, so a kept cluster's postgresql.conf is never edited. */
function serverArgs({ dataDir, socketDir, port }) {
  return [
    '-D',
    dataDir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `port=${port}`,
    '-c',
    `unix_socket_directories=${socketDir}`,
    '-c',
    'unix_socket_permissions=0700',
    '-c',
    // Small keyed statements only: compiling them would cost more than it saves.
    'jit=off',
    '-c',
    'logging_collector=off',
    '-c',
    'log_min_messages=warning',
  ];
}

/** FerretDB's connection URL: over the private socket directory. */
function ferretdbUrl({ socketDir, port }) {
  const q = new URLSearchParams({ host: socketDir, port: String(port), user: PG_ROLE });
  return `postgres:///${PG_DATABASE}?${q.toString()}`;
}

/** Spawns the server under `sup` (as the cluster's user), waits for it and creates FerretDB's database once. */
async function startPostgres(sup, { cluster, port, logFile, readyTimeoutMs, exitReason, sleep }) {
  const fd = fs.openSync(logFile, 'a');
  const started = Date.now();
  let managed;
  try {
    managed = sup.spawn('postgres', pgBinary('postgres'), serverArgs({ ...cluster, port }), {
      cwd: cluster.dir,
      env: pgEnv(),
      uid: cluster.who && cluster.who.uid,
      gid: cluster.who && cluster.who.gid,
      stdio: ['ignore', fd, fd],
    });
  } finally {
    fs.closeSync(fd);
  }
  const client = (args) =>
    spawnSync(pgBinary('psql'), ['-X', '-q', '-h', cluster.socketDir, '-p', String(port), '-U', PG_ROLE].concat(args), {
      cwd: cluster.dir,
      env: pgEnv(),
      encoding: 'utf8',
      uid: cluster.who && cluster.who.uid,
      gid: cluster.who && cluster.who.gid,
      timeout: 10_000,
    });
  try {
    const deadline = started + readyTimeoutMs;
    for (;;) {
      const why = exitReason(managed, logFile);
      if (why) throw new Error(why);
      if (client(['-d', 'postgres', '-tAc', 'select 1']).status === 0) break;
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections within ${readyTimeoutMs} ms`);
      await sleep(100);
    }
    const exists = client(['-d', 'postgres', '-tAc', `select 1 from pg_database where datname = '${PG_DATABASE}'`]);
    if (exists.stdout.trim() !== '1') {
      const res = client(['-d', 'postgres', '-c', `create database ${PG_DATABASE}`]);
      if (res.status !== 0) throw new Error(`create database ${PG_DATABASE} failed: ${res.stderr}`);
    }
  } catch (err) {
    await sup.stopChild(managed);
    throw err;
  }
  return { managed, url: ferretdbUrl({ ...cluster, port }), ms: Date.now() - started };
}

module.exports = {
  PG_MAJOR,
  PG_PACKAGE,
  PG_SYSTEM_USER,
  pgBinDir,
  postgresInstalled,
  ensurePostgres,
  prepareCluster,
  serverArgs,
  ferretdbUrl,
  startPostgres,
};
