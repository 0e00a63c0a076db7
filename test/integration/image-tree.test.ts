/**
 * The production image's file tree, built by the script the Dockerfile runs (scripts/image-tree.js; the rule packs
 * copied from the verified test cache instead of fetched again), started as the image starts it: NODE_ENV=production,
 * the prebuilt workflow bundle, RULES_CACHE_DIR inside the tree. Without rule packs or keys the API and the worker
 * refuse to start and say what is missing; with them the API is ready (rule packs included) and the demo invoice is
 * validated and delivered over Peppol on loopback (the demo's network: test PKI, local SML zone, our own SMP).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEMO } from '../../src/main/seed-demo';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';
import { eventually } from '../support/poll';
import { requireEnv, uniqueDbUri } from '../support/services';

/* eslint-disable @typescript-eslint/no-require-imports */
const { buildImageTree } = require('../../scripts/image-tree') as {
  buildImageTree(out: string, o: { rulesFrom?: string }): Promise<string>;
};
const { rulesDir } = require('../../scripts/rules/lib/paths') as { rulesDir(env?: NodeJS.ProcessEnv): string };
const demo = require('../../scripts/lib/demo') as {
  DEMO_DOCUMENTS: { invoice: string };
  demoPeppolEnv(o: { pkiDir: string; dnsAddress: string; publicBaseUrl: string }): Record<string, string>;
};
const { startLocalSml } = require('../../scripts/lib/local-sml') as {
  startLocalSml(o: { zoneFile: string }): Promise<{ address: string; close(): Promise<void> }>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

jest.setTimeout(300_000);

interface Exited {
  code: number | null;
  output: string;
}

/** A process of the tree; its output is kept for the assertions and for a failure's message. */
class TreeProcess {
  output = '';
  readonly exited: Promise<Exited>;
  private readonly child: ChildProcess;

  constructor(tree: string, script: string, args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [path.join(tree, 'dist', 'src', 'main', script), ...args], {
      cwd: tree,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer) => {
      this.output = (this.output + d.toString('utf8')).slice(-20_000);
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve({ code, output: this.output })));
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('the production image tree (scripts/image-tree.js), started as the image starts it', () => {
  const { temporalAddress, mongodbUri } = requireEnv();
  let dir: string;
  let tree: string;
  const processes: TreeProcess[] = [];

  /** The environment of the image (Dockerfile ENV) over the test servers, plus `extra`. */
  function imageEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      TEMPORAL_WORKFLOW_BUNDLE: path.join(tree, 'dist', 'workflow-bundle.js'),
      RULES_CACHE_DIR: path.join(tree, 'rules'),
      TEMPORAL_ADDRESS: temporalAddress,
      WORKER_METRICS_ADDRESS: '',
      ...extra,
    };
  }

  function start(script: string, args: string[], env: NodeJS.ProcessEnv): TreeProcess {
    const p = new TreeProcess(tree, script, args, env);
    processes.push(p);
    return p;
  }

  beforeAll(async () => {
    await testPki();
    dir = mkdtempSync(path.join(os.tmpdir(), 'image-tree-'));
    tree = await buildImageTree(path.join(dir, 'app'), { rulesFrom: rulesDir() });
  }, 600_000);

  afterAll(async () => {
    for (const p of processes) await p.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start without rule packs or Peppol keys, and says what is missing', async () => {
    const env = imageEnv({
      RULES_CACHE_DIR: path.join(dir, 'no-rules'),
      MONGODB_URI: uniqueDbUri(mongodbUri, `imagerefuse${randomUUID().slice(0, 8)}`),
      TEMPORAL_TASK_QUEUE: `image-refuse-${randomUUID()}`,
      PORT: String(await freePort()),
    });
    for (const script of ['worker.js', 'api.js']) {
      const { code, output } = await start(script, [], env).exited;
      expect([script, code]).toEqual([script, 1]);
      expect(output).toMatch(/failed to start: self-check failed: rules: \d+ of \d+ rule packs are not ready/);
      expect(output).toContain('ubl-2.1@2.1 (RULE_PACK_MISSING)');
      expect(output).toContain('peppol: no Peppol access-point key: set PEPPOL_AP_KEYSTORE');
    }
    // The same checks on the command line, for the operator.
    const check = await start('admin.js', ['self-check'], env).exited;
    expect(check.code).toBe(1);
    expect(check.output).toMatch(/FAIL rules: .*RULE_PACK_MISSING/);
    expect(check.output).toMatch(/ok {3}xsd: libxml2-wasm /);
  });

  it('validates and delivers the demo invoice over Peppol on loopback', async () => {
    const zoneFile = path.join(dir, 'sml-zone.json');
    const sml = await startLocalSml({ zoneFile });
    try {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const env = imageEnv({
        ...demo.demoPeppolEnv({ pkiDir: TEST_PKI_DIR, dnsAddress: sml.address, publicBaseUrl: base }),
        MONGODB_URI: uniqueDbUri(mongodbUri, `imagedemo${randomUUID().slice(0, 8)}`),
        TEMPORAL_TASK_QUEUE: `image-demo-${randomUUID()}`,
        WEBHOOK_SEARCH_ATTRIBUTES: 'false',
        HOST: '127.0.0.1',
        PORT: String(port),
      });
      const checked = await start('admin.js', ['self-check', '--json'], env).exited;
      expect(checked.code).toBe(0);
      expect(JSON.parse(checked.output)).toMatchObject({ ok: true });

      const seeded = await start('admin.js', ['seed-demo', '--sml-zone-file', zoneFile, '--json'], env).exited;
      expect(seeded.code).toBe(0);
      const seed = JSON.parse(seeded.output) as { clientId: string; clientSecret: string };
      const api = start('api.js', [], env);
      const worker = start('worker.js', [], env);
      const ready = await eventually(
        async () => {
          if (api.output.includes('failed to start') || worker.output.includes('failed to start'))
            throw new Error(`a process did not start:\n${api.output}\n${worker.output}`);
          const res = await fetch(`${base}/readyz`).catch(() => undefined);
          return res?.status === 200 ? ((await res.json()) as { checks: Record<string, string> }) : undefined;
        },
        90_000,
        () => `the API at ${base} ready\n${api.output.slice(-2000)}`,
        500,
      );
      expect(ready.checks).toEqual({ database: 'ok', temporal: 'ok', rules: 'ok' });

      const token = await fetch(`${base}/connect/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: seed.clientId,
          client_secret: seed.clientSecret,
          scope: 'ap',
        }),
      }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
      const auth = { authorization: `Bearer ${token}` };
      const upload = await fetch(`${base}/api/v1/${DEMO.partyId}/salesInvoice/send`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/xml' },
        body: readFileSync(demo.DEMO_DOCUMENTS.invoice),
      });
      expect(upload.status).toBe(200);
      const { id } = (await upload.json()) as { id: string };
      const status = await eventually(
        async () => {
          const res = await fetch(`${base}/api/v1/${DEMO.partyId}/salesInvoice/${id}/status`, { headers: auth });
          const body = (await res.json()) as { state: string; validation?: { errorCount: number } };
          return ['delivered', 'InvoiceSentError'].includes(body.state) ? body : undefined;
        },
        120_000,
        () => `the demo invoice delivered\n${worker.output.slice(-3000)}`,
        500,
      );
      expect(status).toMatchObject({ state: 'delivered' });
    } finally {
      await sml.close();
    }
  });
});
