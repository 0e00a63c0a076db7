import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { requireEnv, uniqueDbUri } from '../../support/services';

// The module is plain CommonJS run by node without a build step; describe the parts used here.
interface ServicesModule {
  DB_NAME: string;
  cacheDir(env?: NodeJS.ProcessEnv): string;
  binDir(env?: NodeJS.ProcessEnv): string;
  lettersOnly(s: string): string;
  buildMongoUri(host: string, port: number, dbName?: string): string;
  hashFiles(files: string[]): string;
  ferretdbSourceHash(dir?: string): string;
  stampPath(binary: string): string;
  isStampCurrent(binary: string, hash: string): boolean;
  temporalServerArgs(o: {
    port: number;
    uiPort?: number;
    ui?: boolean;
    dbFile?: string;
    metricsPort?: number;
  }): string[];
  temporalChildEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  temporalServerEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  parseHostPort(a: string): { host: string; port: number } | undefined;
  findOnPath(name: string, env?: NodeJS.ProcessEnv): string | undefined;
  databasePlan(env?: NodeJS.ProcessEnv): { kind: string; path?: string; backend?: string };
  localDbBackend(env?: NodeJS.ProcessEnv): string;
  DEFAULT_LOCAL_DB_BACKEND: string;
  getFreePort(host?: string): Promise<number>;
  canConnect(host: string, port: number, timeoutMs?: number): Promise<boolean>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../../scripts/lib/services') as ServicesModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const postgres = require('../../../scripts/lib/postgres') as {
  serverArgs(o: { dataDir: string; socketDir: string; port: number }): string[];
  ferretdbUrl(o: { socketDir: string; port: number }): string;
};

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'services-unit-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function write(name: string, content: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, content);
  return file;
}

describe('cache location', () => {
  it('honours INVOICE_GATEWAY_CACHE', () => {
    expect(services.cacheDir({ INVOICE_GATEWAY_CACHE: '/x/cache' })).toBe('/x/cache');
    expect(services.binDir({ INVOICE_GATEWAY_CACHE: '/x/cache' })).toBe('/x/cache/bin');
  });

  it('defaults to ~/.cache/invoice-gateway, outside the repository', () => {
    expect(services.cacheDir({})).toBe(path.join(os.homedir(), '.cache', 'invoice-gateway'));
  });
});

describe('database URIs', () => {
  it('builds a URI with a letters-only database name', () => {
    expect(services.buildMongoUri('127.0.0.1', 27017)).toBe('mongodb://127.0.0.1:27017/invoicegateway');
    expect(services.buildMongoUri('127.0.0.1', 1, 'a-b_c9d')).toBe('mongodb://127.0.0.1:1/abcd');
    expect(() => services.buildMongoUri('127.0.0.1', 1, '123')).toThrow(/no letters/);
    expect(services.DB_NAME).toMatch(/^[A-Za-z]+$/);
  });

  it('gives each test file its own database on the same server', () => {
    const base = 'mongodb://127.0.0.1:4000/invoicegateway';
    expect(uniqueDbUri(base, 'storage.test-1')).toBe('mongodb://127.0.0.1:4000/invoicegatewaystoragetest');
    expect(uniqueDbUri('mongodb://u:p@h:1,h2:2/db?replicaSet=rs', 'x_y')).toBe(
      'mongodb://u:p@h:1,h2:2/dbxy?replicaSet=rs',
    );
    expect(uniqueDbUri('mongodb://h:1', 'abc')).toBe('mongodb://h:1/testabc');
    expect(uniqueDbUri(base, 'z'.repeat(100)).split('/').pop()).toHaveLength(63);
    expect(() => uniqueDbUri(base, '42')).toThrow(/no letters/);
    expect(() => uniqueDbUri('http://x', 'a')).toThrow(/not a MongoDB URI/);
  });
});

describe('requireEnv', () => {
  it('returns the addresses npm test exported', () => {
    expect(requireEnv({ TEMPORAL_ADDRESS: 'h:1', MONGODB_URI: 'mongodb://h:2/x' })).toEqual({
      temporalAddress: 'h:1',
      mongodbUri: 'mongodb://h:2/x',
    });
  });

  it('explains what to do when npm test was bypassed', () => {
    expect(() => requireEnv({ MONGODB_URI: 'mongodb://h:2/x' })).toThrow(/TEMPORAL_ADDRESS not set.*npm test/);
    expect(() => requireEnv({})).toThrow(/TEMPORAL_ADDRESS and MONGODB_URI/);
  });
});

describe('FerretDB build stamp', () => {
  it('hashes names and contents in order', () => {
    const a = write('a.go', 'package a');
    const b = write('b.go', 'package b');
    const h1 = services.hashFiles([a, b]);
    expect(h1).toMatch(/^[0-9a-f]{64}$/);
    expect(services.hashFiles([a, b])).toBe(h1);
    expect(services.hashFiles([b, a])).not.toBe(h1);
    fs.writeFileSync(b, 'package b // changed');
    expect(services.hashFiles([a, b])).not.toBe(h1);
  });

  it('does not confuse content moving across the file boundary', () => {
    const x = write('x', 'ab');
    const y = write('y', 'c');
    const h = services.hashFiles([x, y]);
    fs.writeFileSync(x, 'a');
    fs.writeFileSync(y, 'bc');
    expect(services.hashFiles([x, y])).not.toBe(h);
  });

  it('covers main.go, go.mod and go.sum of the wrapper', () => {
    for (const f of ['main.go', 'go.mod', 'go.sum']) write(f, `${f} v1`);
    const h = services.ferretdbSourceHash(tmp);
    write('README', 'ignored');
    expect(services.ferretdbSourceHash(tmp)).toBe(h);
    write('go.sum', 'go.sum v2');
    expect(services.ferretdbSourceHash(tmp)).not.toBe(h);
  });

  it('is current only for an executable binary with a matching stamp', () => {
    const bin = path.join(tmp, 'ferretdb-embed');
    expect(services.isStampCurrent(bin, 'abc')).toBe(false);
    fs.writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 });
    expect(services.isStampCurrent(bin, 'abc')).toBe(false);
    fs.writeFileSync(services.stampPath(bin), 'abc\n');
    expect(services.isStampCurrent(bin, 'abc')).toBe(true);
    expect(services.isStampCurrent(bin, 'abd')).toBe(false);
  });
});

describe('Temporal dev server command line', () => {
  it('in memory and headless', () => {
    const args = services.temporalServerArgs({ port: 7300 });
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(args.join(' ')).toContain('--ip 127.0.0.1 --port 7300 --namespace default --log-level warn');
    expect(args.join(' ')).toContain('--search-attribute TenantId=Keyword --search-attribute DocumentId=Keyword');
    expect(args.join(' ')).toContain('--dynamic-config-value frontend.enableServerVersionCheck=false');
    expect(args).toContain('--headless');
    expect(args).not.toContain('--db-filename');
    expect(args).not.toContain('--ui-port');
    expect(args).not.toContain('--metrics-port');
  });

  it('serves its metrics on a given port', () => {
    expect(services.temporalServerArgs({ port: 7300, metricsPort: 9300 }).join(' ')).toContain('--metrics-port 9300');
  });

  it('persistent with UI', () => {
    const args = services.temporalServerArgs({ port: 7300, uiPort: 8300, ui: true, dbFile: '/d/t.db' }).join(' ');
    expect(args).toContain('--db-filename /d/t.db --sqlite-pragma journal_mode=WAL --sqlite-pragma synchronous=NORMAL');
    expect(args).toContain('--ui-port 8300');
    expect(args).not.toContain('--headless');
  });

  it('runs the CLI without stray TEMPORAL_* settings and without the version check', () => {
    const env = services.temporalChildEnv({ PATH: '/bin', TEMPORAL_ADDRESS: 'x:1', TEMPORAL_NAMESPACE: 'n' });
    expect(env).toEqual({ PATH: '/bin', TEMPORAL_VERSION_CHECK_DISABLED: '1' });
  });

  it('runs the server with a larger Go heap goal under a soft limit, unless the caller chose its own', () => {
    expect(services.temporalServerEnv({ PATH: '/bin', TEMPORAL_ADDRESS: 'x:1' })).toEqual({
      PATH: '/bin',
      TEMPORAL_VERSION_CHECK_DISABLED: '1',
      GOGC: '400',
      GOMEMLIMIT: '2GiB',
    });
    const own = services.temporalServerEnv({ PATH: '/bin', GOGC: '150', GOMEMLIMIT: '3GiB' });
    expect([own.GOGC, own.GOMEMLIMIT]).toEqual(['150', '3GiB']);
    expect(services.temporalServerEnv({ GOGC: 'off' }).GOMEMLIMIT).toBe('2GiB');
    // The CLI's short commands keep Go's defaults.
    expect(services.temporalChildEnv({ PATH: '/bin' }).GOGC).toBeUndefined();
  });

  it('parses host:port addresses', () => {
    expect(services.parseHostPort('127.0.0.1:7233')).toEqual({ host: '127.0.0.1', port: 7233 });
    expect(services.parseHostPort('[::1]:7233')).toEqual({ host: '::1', port: 7233 });
    expect(services.parseHostPort('temporal.example')).toBeUndefined();
  });
});

describe('finding executables and choosing the database', () => {
  it('finds executables on PATH only', () => {
    const exe = path.join(tmp, 'mongod');
    fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
    write('plain', '');
    expect(services.findOnPath('mongod', { PATH: `/nonexistent${path.delimiter}${tmp}` })).toBe(exe);
    expect(services.findOnPath('plain', { PATH: tmp })).toBeUndefined();
    expect(services.databasePlan({ PATH: tmp })).toEqual({ kind: 'mongod', path: exe });
    expect(services.databasePlan({ PATH: tmp, MONGODB_URI: 'mongodb://h:1/x' })).toEqual({ kind: 'env' });
    expect(services.databasePlan({ PATH: '/nonexistent' })).toEqual({
      kind: 'ferretdb',
      backend: services.DEFAULT_LOCAL_DB_BACKEND,
    });
  });

  it('runs FerretDB on the backend LOCAL_DB_BACKEND names, and refuses any other', () => {
    expect(services.databasePlan({ PATH: '/nonexistent', LOCAL_DB_BACKEND: 'postgres' })).toEqual({
      kind: 'ferretdb',
      backend: 'postgres',
    });
    expect(services.localDbBackend({ LOCAL_DB_BACKEND: ' SQLite ' })).toBe('sqlite');
    expect(['sqlite', 'postgres']).toContain(services.localDbBackend({}));
    expect(() => services.localDbBackend({ LOCAL_DB_BACKEND: 'mysql' })).toThrow(
      /LOCAL_DB_BACKEND=mysql.*sqlite, postgres/,
    );
  });
});

describe('the private PostgreSQL cluster', () => {
  it('listens on loopback only, on its own port and socket directory, and FerretDB reaches it through the socket', () => {
    const args = postgres.serverArgs({ dataDir: '/c/data', socketDir: '/c/sock', port: 5999 }).join(' ');
    expect(args).toMatch(/^-D \/c\/data /);
    expect(args).toContain('-c listen_addresses=127.0.0.1');
    expect(args).toContain('-c port=5999');
    expect(args).toContain('-c unix_socket_directories=/c/sock');
    expect(args).toContain('-c unix_socket_permissions=0700');
    const url = new URL(postgres.ferretdbUrl({ socketDir: '/c/sock', port: 5999 }));
    expect(url.protocol).toBe('postgres:');
    expect(url.pathname).toBe('/ferretdb');
    expect(url.searchParams.get('host')).toBe('/c/sock');
    expect(url.searchParams.get('port')).toBe('5999');
  });
});

describe('free ports', () => {
  it('picks a loopback port nobody listens on', async () => {
    const port = await services.getFreePort();
    expect(port).toBeGreaterThan(0);
    expect(await services.canConnect('127.0.0.1', port, 500)).toBe(false);
    const srv = net.createServer().listen(port, '127.0.0.1');
    await new Promise((resolve) => srv.once('listening', resolve));
    try {
      expect(await services.canConnect('127.0.0.1', port, 500)).toBe(true);
    } finally {
      await new Promise((resolve) => srv.close(resolve));
    }
  });
});
